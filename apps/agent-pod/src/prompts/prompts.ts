import type { PromptDefinition } from '@mcpgw/contracts';
import type { SkillContext } from '../skills/skill';

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

export const PROMPTS = Symbol('PROMPTS');
