/**
 * PostgreSQL's jsonb cannot hold the character U+0000, nor a lone UTF-16
 * surrogate (`\ud800` without its pair), in a string or a key: an insert
 * carrying either fails, and with it every row of a group commit it joined.
 * Envelopes, arguments and session data are checked with this before they are
 * stored, and refused (or, for a skill's output, replaced by a tool error)
 * instead.
 */

/**
 * In JSON text as JSON.stringify writes it, both appear only as escapes:
 * `\u0000`, and `\ud800`-`\udfff` for a surrogate without its pair (a pair is
 * written as the character itself). An escape counts after an even number of
 * backslashes (an odd one escapes the `\`).
 */
const UNSTORABLE_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

/** Whether JSON text (as JSON.stringify writes it) holds U+0000 or a lone surrogate in a string or a key. */
export function jsonHoldsUnstorableText(json: string): boolean {
  return json.includes('\\u') && UNSTORABLE_ESCAPE.test(json);
}

/** U+0000, or a surrogate without its pair: with the `u` flag, a pair is one code point and matches nothing here. */
const UNSTORABLE_CHARACTER = /[\u0000\ud800-\udfff]/u;

/** Deeper than this, the value is read as JSON text instead (which also refuses a cycle, as before). */
const MAX_DEPTH = 256;

/**
 * Whether a value, serialised as JSON, would hold U+0000 or a lone surrogate.
 * Read in place, string by string, over what JSON.stringify would write (own
 * enumerable keys, `toJSON`, wrapped primitives, no undefined, function or
 * symbol values): a call's arguments and a skill's output are checked on every
 * call, and serialising them only to look cost the agent pod 2.2 % of its CPU
 * (docs/benchmarks.md). Like JSON.stringify, it throws on a BigInt and, unless
 * it finds such text first, on a cycle.
 */
export function holdsUnstorableText(value: unknown): boolean {
  return holds(asJson(value, ''), 0);
}

/** What JSON.stringify serialises in place of `value` under `key`: its `toJSON()`, a wrapped primitive unwrapped. */
function asJson(value: unknown, key: string): unknown {
  if (value !== null && (typeof value === 'object' || typeof value === 'bigint')) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') value = toJSON.call(value, key);
  }
  if (value instanceof String || value instanceof Number || value instanceof Boolean) return value.valueOf();
  return value;
}

function holds(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return UNSTORABLE_CHARACTER.test(value);
  if (typeof value === 'bigint') throw new TypeError('Do not know how to serialize a BigInt');
  if (typeof value !== 'object' || value === null) return false;
  if (depth > MAX_DEPTH) return jsonHoldsUnstorableText(JSON.stringify(value) ?? '');
  if (Array.isArray(value)) return value.some((item, i) => holds(asJson(item, String(i)), depth + 1));
  for (const key of Object.keys(value)) {
    const item = asJson((value as Record<string, unknown>)[key], key);
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    if (UNSTORABLE_CHARACTER.test(key) || holds(item, depth + 1)) return true;
  }
  return false;
}

export const UNSTORABLE_TEXT_REFUSAL = 'text may not contain the character U+0000 or a lone UTF-16 surrogate';
