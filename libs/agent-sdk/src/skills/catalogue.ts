import type { PromptDefinition, ResourceDefinition, ResourceTemplateDefinition } from '@mcpgw/contracts';
import type { Skill, SkillContext } from './skill';

export interface ResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
}

/** The resources an agent serves: what it registers, and how it reads one. */
export interface ResourceProvider {
  resources: ResourceDefinition[];
  templates: ResourceTemplateDefinition[];
  /** Undefined when the URI is not one of these resources. */
  read(uri: string): Promise<ResourceContents[] | undefined>;
}

export interface PromptMessage {
  role: 'user' | 'assistant';
  content: Record<string, unknown>;
}

/** The prompts an agent offers: what it registers, and how it renders one. */
export interface PromptProvider {
  prompts: PromptDefinition[];
  /** Undefined when there is no such prompt. A prompt may ask the client (`ask`), as a skill does. */
  get(
    name: string,
    args: Record<string, string>,
    ask: SkillContext['ask'],
  ): Promise<{ description?: string; messages: PromptMessage[] } | undefined>;
}

/** Everything an agent registers: its skills (MCP tools), resources and prompts. */
export interface Catalogue {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each skill types its own arguments
  skills: readonly Skill<any>[];
  resources?: ResourceProvider;
  prompts?: PromptProvider;
}

export const NO_RESOURCES: ResourceProvider = { resources: [], templates: [], read: async () => undefined };
export const NO_PROMPTS: PromptProvider = { prompts: [], get: async () => undefined };
