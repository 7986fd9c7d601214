import type { ChatMessage, ContentItem, SkillDefinition, StoredMessage } from '@mcpgw/contracts';

/** What a skill sees of the message it answers. */
export interface SkillContext {
  message: ChatMessage;
  podId: string;
  /** Aborted when the pod shuts down (and, later, when the caller cancels). */
  signal: AbortSignal;
  /** The channel's messages, oldest first: how an agent remembers earlier turns. */
  history(): Promise<StoredMessage[]>;
}

export interface SkillOutput {
  content: ContentItem[];
  structured?: Record<string, unknown>;
  /** A tool-level failure the model can read (MCP `isError`). */
  isError?: boolean;
}

export interface Skill {
  definition: SkillDefinition;
  run(args: Record<string, unknown>, ctx: SkillContext): Promise<SkillOutput>;
}

export const SKILLS = Symbol('SKILLS');

export function text(value: string): ContentItem {
  return { type: 'text', text: value };
}
