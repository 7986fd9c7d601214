import type { RuntimeGrant } from '@mcpgw/grants';
import { mayUseTool, principalCallMeta, type AgentPrincipal } from './principal';
import type { CatalogueTool } from '../catalogue/tool-catalogue.service';
import { grantAllows, grantCallMeta, missingCredentials } from '../grants/grant-tools';
import { taskCaller } from '../grants/task-caller';

/**
 * Who calls a sessionless surface (REST, A2A), as one of the two credentials
 * made it: an agent API key or OAuth token (as on MCP surface A), or a
 * RuntimeGrant (as on surface B). `callerId` is the same as on the MCP surface
 * with the same credential, so idempotency keys, quotas, files and webhooks
 * are one space across the three surfaces.
 */
export type Caller =
  | { via: 'agent'; agentId: string; callerId: string; principal: AgentPrincipal }
  | { via: 'grant'; agentId: string; callerId: string; grant: RuntimeGrant };

export function agentCaller(principal: AgentPrincipal): Caller {
  return { via: 'agent', agentId: principal.agentId, callerId: principal.callerId, principal };
}

export function grantCaller(grant: RuntimeGrant): Caller {
  return { via: 'grant', agentId: grant.agentId, callerId: taskCaller(grant), grant };
}

/** A tool the caller may see and call: every tool for a key, the OAuth claim's, or the grant's list. */
export function callerMayUse(caller: Caller, tool: CatalogueTool): boolean {
  return caller.via === 'agent' ? mayUseTool(caller.principal, tool.definition.name) : grantAllows(caller.grant, tool);
}

/** The credentials a granted call needs and the grant lacks (never any for a key). */
export function callerLacks(caller: Caller, tool: CatalogueTool): string[] {
  return caller.via === 'grant' ? missingCredentials(caller.grant, tool) : [];
}

/** What the agent is told about the caller (as the MCP surface with the same credential tells it). */
export function callerMeta(caller: Caller, tool: CatalogueTool): Record<string, unknown> | undefined {
  return caller.via === 'agent' ? principalCallMeta(caller.principal) : grantCallMeta(tool);
}
