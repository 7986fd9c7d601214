import type { PromptDefinition, ResourceDefinition, ResourceTemplateDefinition } from '@mcpgw/contracts';
import type { MessageHandler } from './message-handler';
import type { Skill, SkillContext } from './skill';

export interface ResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
}

/** Values for what a user is typing (MCP completion/complete): at most 100 are passed on. */
export interface Completion {
  values: string[];
  /** How many values there are in all, when more match than are given. */
  total?: number;
  hasMore?: boolean;
}

/**
 * Completes one argument: `name` (a prompt's argument, a template's variable)
 * typed so far as `value`; `resolved` holds those already chosen.
 */
export type Completer<Ref> = (
  ref: Ref,
  argument: { name: string; value: string },
  resolved: Record<string, string>,
) => Promise<Completion>;

/** The resources an agent serves: what it registers, and how it reads one. */
export interface ResourceProvider {
  resources: ResourceDefinition[];
  templates: ResourceTemplateDefinition[];
  /** Undefined when the URI is not one of these resources. */
  read(uri: string): Promise<ResourceContents[] | undefined>;
  /** Completes a template's variables (`ref` is the template's `uriTemplate`); none without it. */
  complete?: Completer<string>;
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
  /** Completes a prompt's arguments (`ref` is the prompt's name); none without it. */
  complete?: Completer<string>;
}

/** Everything an agent registers: its skills (MCP tools), resources and prompts, and its message handler. */
export interface Catalogue {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each skill types its own arguments
  skills: readonly Skill<any>[];
  resources?: ResourceProvider;
  prompts?: PromptProvider;
  /** Answers conversational messages (registered as `conversation`: without it the gateway sends none). */
  onMessage?: MessageHandler;
}

export const NO_RESOURCES: ResourceProvider = { resources: [], templates: [], read: async () => undefined };
export const NO_PROMPTS: PromptProvider = { prompts: [], get: async () => undefined };
