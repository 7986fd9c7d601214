/** Marks a response this request did not produce itself (Stripe's header name). */
export const REPLAYED_HEADER = 'idempotent-replayed';
const REPLAY_META_KEY = 'mcpgw/idempotentReplay';

/** The stored result with `_meta` saying it is a replay; every other byte unchanged. */
export function markReplay(resultText: string): string {
  const value = JSON.parse(resultText) as { _meta?: Record<string, unknown> };
  value._meta = { ...value._meta, [REPLAY_META_KEY]: true };
  return JSON.stringify(value);
}
