import type { RuntimeGrant } from '@mcpgw/grants';
import type { CatalogueTool } from '../catalogue/tool-catalogue.service';

/**
 * What a RuntimeGrant lets its task call, for every surface that takes a grant
 * (MCP surface B, the REST twin): the tools it names, by id or name, and only
 * with the credentials the tool needs.
 */
export function grantAllows(grant: RuntimeGrant, tool: CatalogueTool): boolean {
  return grant.tools.includes(tool.id) || grant.tools.includes(tool.definition.name);
}

/** The credentials the tool needs that the grant's task does not hold (empty: none missing). */
export function missingCredentials(grant: RuntimeGrant, tool: CatalogueTool): string[] {
  return (tool.definition.required_credentials ?? []).filter((name) => !grant.credentials.includes(name));
}

/** What the agent is told about a granted call: the names of the credentials it may use. */
export function grantCallMeta(tool: CatalogueTool): Record<string, unknown> | undefined {
  const required = tool.definition.required_credentials ?? [];
  return required.length ? { credentials: required } : undefined;
}
