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

/** Whether a value, serialised as JSON, would hold U+0000 or a lone surrogate. */
export function holdsUnstorableText(value: unknown): boolean {
  const json = JSON.stringify(value);
  return json !== undefined && jsonHoldsUnstorableText(json);
}

export const UNSTORABLE_TEXT_REFUSAL = 'text may not contain the character U+0000 or a lone UTF-16 surrogate';
