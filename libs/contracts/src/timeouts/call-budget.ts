import type { ChatMessage } from '../envelopes/chat-message';
import { Deadline } from './deadline';

/**
 * `chat_message.meta.timeout_ms`: how long the agent may work on the message,
 * in milliseconds left when this posting was sent (the gateway writes it on
 * every posting). The pod anchors it on arrival and stops the skill, and its
 * questions to the client, when it runs out. Optional: a message without it
 * (an older sender, a user's message) runs to completion as before.
 */
export const CALL_BUDGET_META_KEY = 'timeout_ms';

/** The message as it is posted now: with the time left before `deadline`. The message itself is not changed. */
export function withCallBudget(message: ChatMessage, deadline: Deadline): ChatMessage {
  return { ...message, meta: { ...message.meta, [CALL_BUDGET_META_KEY]: deadline.toWire() } };
}

/** The message's deadline on this host (anchored now), or undefined when it carries none. */
export function callDeadlineOf(message: Pick<ChatMessage, 'meta'>): Deadline | undefined {
  return Deadline.fromWire(message.meta?.[CALL_BUDGET_META_KEY]);
}
