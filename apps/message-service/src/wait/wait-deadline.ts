import { Deadline, callDeadlineOf, type ChatMessage } from '@mcpgw/contracts';

/** How long the REST mirror's `POST /channels/{id}/wait` waits when its body names no `timeout_ms`. */
export const HTTP_WAIT_DEFAULT_MS = 30_000;

/**
 * The deadline of one wait, anchored when its request arrives. A wait request
 * carries the time it may last (`timeout_ms`, relative: no clock is compared
 * across hosts), which the gateway derives from the call's deadline; a
 * post_and_wait's message may also carry the agent's own budget
 * (`meta.timeout_ms`), and nobody answers after it, so the wait ends there at
 * the latest. WAIT_MAX_MS caps every wait, whatever it asks: the gateway waits
 * again when a wait ends early (apps/gateway/src/timeouts/README.md).
 */
export function waitDeadline(timeoutMs: unknown, maxMs: number, message?: Pick<ChatMessage, 'meta'>): Deadline {
  const asked = Number(timeoutMs) || 0;
  const wait = Deadline.after(Math.min(asked, maxMs));
  return message ? wait.min(callDeadlineOf(message)) : wait;
}
