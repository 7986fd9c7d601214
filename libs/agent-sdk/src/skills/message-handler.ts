import type { ChatMessage } from '@mcpgw/contracts';
import type { SkillContext, SkillResult } from './skill';

/**
 * A conversational message as its handler sees it: what was said (the
 * chat_message's `text` and `data`; an A2A message that named no skill).
 * Earlier turns of the same conversation (one A2A contextId, one channel) are
 * `ctx.history()`.
 */
export interface ConversationalMessage {
  text: NonNullable<ChatMessage['text']>;
  data?: ChatMessage['data'];
}

/**
 * Answers conversational messages: text (a string), content items, or the
 * whole output, as a skill does; `ctx` is a skill's (history, progress, ask,
 * the signal and deadline). Throw `ToolError` for an error the caller reads.
 */
export type MessageHandler = (message: ConversationalMessage, ctx: SkillContext) => Promise<SkillResult>;

/** What the handler is given of the chat_message. */
export function conversationalMessage(message: ChatMessage): ConversationalMessage {
  return { text: message.text ?? '', ...(message.data && { data: message.data }) };
}

/** The error an agent without a handler answers (the gateway asks only agents that registered one). */
export const NO_MESSAGE_HANDLER = 'this agent answers no conversational messages: name one of its skills';
