import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type {
  PromptDefinition,
  ResourceDefinition,
  ResourceTemplateDefinition,
  SideEffectClass,
  SkillDefinition,
} from '@mcpgw/contracts';

/** What the MCP server offers, in the shapes an agent registers. */
export interface ServerCatalogue {
  tools: SkillDefinition[];
  resources: ResourceDefinition[];
  templates: ResourceTemplateDefinition[];
  prompts: PromptDefinition[];
  /** The server completes prompt arguments and template variables (`completions` capability). */
  completions: boolean;
  /** The server sends `notifications/resources/updated` for resources subscribed to. */
  subscribe: boolean;
}

/** Every page of a list (servers may paginate with `nextCursor`). */
async function everyPage<T>(page: (cursor?: string) => Promise<{ items: T[]; nextCursor?: string }>): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  do {
    const { items, nextCursor } = await page(cursor);
    all.push(...items);
    cursor = nextCursor;
  } while (cursor);
  return all;
}

/** The server's tools, resources, templates and prompts, for the capabilities it declares. */
export async function readCatalogue(client: Client): Promise<ServerCatalogue> {
  const capabilities = client.getServerCapabilities() ?? {};
  const tools = capabilities.tools
    ? await everyPage(async (cursor) => {
        const page = await client.listTools(cursor ? { cursor } : undefined);
        return { items: page.tools, nextCursor: page.nextCursor };
      })
    : [];
  const resources = capabilities.resources
    ? await everyPage(async (cursor) => {
        const page = await client.listResources(cursor ? { cursor } : undefined);
        return { items: page.resources, nextCursor: page.nextCursor };
      })
    : [];
  const templates = capabilities.resources
    ? await everyPage(async (cursor) => {
        const page = await client.listResourceTemplates(cursor ? { cursor } : undefined);
        return { items: page.resourceTemplates, nextCursor: page.nextCursor };
      })
    : [];
  const prompts = capabilities.prompts
    ? await everyPage(async (cursor) => {
        const page = await client.listPrompts(cursor ? { cursor } : undefined);
        return { items: page.prompts, nextCursor: page.nextCursor };
      })
    : [];
  return {
    completions: capabilities.completions !== undefined,
    subscribe: capabilities.resources?.subscribe === true,
    tools: tools.map((tool): SkillDefinition => ({
      name: tool.name,
      description: tool.description ?? tool.title ?? tool.name,
      input_schema: tool.inputSchema as Record<string, unknown>,
      side_effect_class: sideEffectOf(tool.annotations),
      ...defined('title', tool.title ?? tool.annotations?.title),
      ...defined('output_schema', tool.outputSchema as Record<string, unknown> | undefined),
      ...defined('annotations', tool.annotations as Record<string, unknown> | undefined),
    })),
    resources: resources.map((resource): ResourceDefinition => ({
      uri: resource.uri,
      name: resource.name,
      ...defined('title', resource.title),
      ...defined('description', resource.description),
      ...defined('mimeType', resource.mimeType),
    })),
    templates: templates.map((template): ResourceTemplateDefinition => ({
      uriTemplate: template.uriTemplate,
      name: template.name,
      ...defined('description', template.description),
      ...defined('mimeType', template.mimeType),
    })),
    prompts: prompts.map((prompt): PromptDefinition => ({
      name: prompt.name,
      ...defined('title', prompt.title),
      ...defined('description', prompt.description),
      ...defined(
        'arguments',
        prompt.arguments?.map((a) => ({
          name: a.name,
          ...defined('description', a.description),
          ...defined('required', a.required),
        })),
      ),
    })),
  };
}

/** What a call may change, from the MCP tool annotations: read-only, destructive, or else a write. */
function sideEffectOf(annotations: { readOnlyHint?: boolean; destructiveHint?: boolean } | undefined): SideEffectClass {
  if (annotations?.readOnlyHint) return 'read';
  // MCP's default for destructiveHint (when not read-only) is true.
  return annotations?.destructiveHint === false ? 'write' : 'destructive';
}

function defined<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
