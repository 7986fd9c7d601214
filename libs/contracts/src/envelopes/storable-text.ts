/**
 * PostgreSQL's jsonb cannot hold the character U+0000 (in a string or a key):
 * an insert carrying it fails, and with it every row of a group commit it
 * joined. Envelopes, arguments and session data are checked with this before
 * they are stored, and refused (or, for a skill's output, replaced by a tool
 * error) instead.
 */

/** JSON text with an escaped U+0000: `\u0000` after an even number of backslashes (an odd one escapes the `\`). */
const ESCAPED_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/;

/** Whether JSON text (as JSON.stringify writes it) holds U+0000 in a string or a key. */
export function jsonHoldsNul(json: string): boolean {
  return json.includes('\\u0000') && ESCAPED_NUL.test(json);
}

/** Whether a value, serialised as JSON, would hold U+0000. */
export function holdsNul(value: unknown): boolean {
  const json = JSON.stringify(value);
  return json !== undefined && jsonHoldsNul(json);
}

export const NUL_REFUSAL = 'text may not contain the character U+0000';
