/** `_meta` key a call may use to ask for another reply timeout (tests use it; so may impatient clients). */
export const TIMEOUT_META_KEY = 'mcpgw/timeoutMs';

/** The call's timeout: the default, or what `_meta` asks for within [100 ms, max]. */
export function callTimeout(meta: unknown, defaultMs: number, maxMs: number): number {
  const asked = Number((meta as Record<string, unknown> | undefined)?.[TIMEOUT_META_KEY]);
  if (!Number.isFinite(asked) || asked <= 0) return defaultMs;
  return Math.min(Math.max(Math.floor(asked), 100), maxMs);
}
