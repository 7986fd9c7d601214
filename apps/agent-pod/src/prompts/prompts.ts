import type { PromptDefinition } from '@mcpgw/contracts';

export interface PromptMessage {
  role: 'user' | 'assistant';
  content: Record<string, unknown>;
}

/** The prompts an agent offers: what it registers, and how it renders one. */
export interface PromptProvider {
  prompts: PromptDefinition[];
  /** Undefined when there is no such prompt. */
  get(
    name: string,
    args: Record<string, string>,
  ): Promise<{ description?: string; messages: PromptMessage[] } | undefined>;
}

export const PROMPTS = Symbol('PROMPTS');
