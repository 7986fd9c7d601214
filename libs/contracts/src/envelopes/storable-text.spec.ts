import { describe, expect, it } from 'vitest';
import { holdsNul, jsonHoldsNul } from './storable-text';

describe('holdsNul', () => {
  it('finds U+0000 in strings and keys, at any depth', () => {
    expect(holdsNul('a\u0000b')).toBe(true);
    expect(holdsNul({ deep: [{ x: '\u0000' }] })).toBe(true);
    expect(holdsNul({ ['k\u0000']: 1 })).toBe(true);
    expect(holdsNul('\\\u0000')).toBe(true);
  });

  it('does not take the text "\\u0000" (a backslash and five characters) for the character', () => {
    expect(holdsNul('\\u0000')).toBe(false);
    expect(holdsNul({ path: 'C:\\\\u0000' })).toBe(false);
    expect(holdsNul('\u0001 plain')).toBe(false);
    expect(holdsNul(undefined)).toBe(false);
  });

  it('reads JSON text as JSON.stringify writes it', () => {
    expect(jsonHoldsNul('"\\u0000"')).toBe(true);
    expect(jsonHoldsNul('"\\\\u0000"')).toBe(false);
    expect(jsonHoldsNul('"\\\\\\u0000"')).toBe(true);
  });
});
