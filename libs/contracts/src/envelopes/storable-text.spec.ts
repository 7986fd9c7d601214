import { describe, expect, it } from 'vitest';
import { holdsUnstorableText, jsonHoldsUnstorableText } from './storable-text';

describe('holdsUnstorableText', () => {
  it('finds U+0000 in strings and keys, at any depth', () => {
    expect(holdsUnstorableText('a\u0000b')).toBe(true);
    expect(holdsUnstorableText({ deep: [{ x: '\u0000' }] })).toBe(true);
    expect(holdsUnstorableText({ ['k\u0000']: 1 })).toBe(true);
    expect(holdsUnstorableText('\\\u0000')).toBe(true);
  });

  it('finds a lone surrogate, high or low, but not a pair', () => {
    expect(holdsUnstorableText({ x: '\ud800' })).toBe(true);
    expect(holdsUnstorableText({ x: 'a\udfffb' })).toBe(true);
    expect(holdsUnstorableText({ ['\udbff']: 1 })).toBe(true);
    expect(holdsUnstorableText('🥀 \ud83e\udd40 paired')).toBe(false);
  });

  it('does not take the text "\\u0000" or "\\ud800" (a backslash and five characters) for the character', () => {
    expect(holdsUnstorableText('\\u0000')).toBe(false);
    expect(holdsUnstorableText('\\ud800')).toBe(false);
    expect(holdsUnstorableText({ path: 'C:\\\\u0000' })).toBe(false);
    expect(holdsUnstorableText('\u0001 plain \u00e9')).toBe(false);
    expect(holdsUnstorableText(undefined)).toBe(false);
  });

  it('reads JSON text as JSON.stringify writes it', () => {
    expect(jsonHoldsUnstorableText('"\\u0000"')).toBe(true);
    expect(jsonHoldsUnstorableText('"\\ud800"')).toBe(true);
    expect(jsonHoldsUnstorableText('"\\\\u0000"')).toBe(false);
    expect(jsonHoldsUnstorableText('"\\\\\\u0000"')).toBe(true);
  });
});

describe('holdsUnstorableText reads what JSON.stringify would write', () => {
  const cases: [string, unknown][] = [
    ['a key whose value JSON leaves out', { ['\u0000']: undefined, ok: 'x' }],
    ['a function value', { f: () => '\u0000' }],
    ['toJSON', { toJSON: () => ({ x: '\ud800' }) }],
    ['a date', { at: new Date(0) }],
    ['an array with holes and nulls', [null, undefined, 1, true, 'a\u0000']],
    ['a pair split across two strings', ['\ud83e', '\udd40']],
    ['deep nesting', JSON.parse('['.repeat(400) + '"\\u0000"' + ']'.repeat(400))],
    ['numbers, booleans and null', { n: 1, b: false, z: null }],
    ['a key whose toJSON gives undefined', { ['\u0000']: { toJSON: () => undefined } }],
    ['toJSON given its key', { ['k']: { toJSON: (key: string) => (key === 'k' ? '\u0000' : 'ok') } }],
    ['a wrapped string holding a pair', { s: new String('\ud83e\udd40') }],
    ['a wrapped string holding NUL', [new String('a\u0000')]],
  ];
  it.each(cases)('%s', (_name, value) => {
    const json = JSON.stringify(value);
    expect(holdsUnstorableText(value)).toBe(json !== undefined && jsonHoldsUnstorableText(json));
  });

  it('refuses a BigInt as JSON.stringify does', () => {
    expect(() => holdsUnstorableText({ n: 1n })).toThrow(TypeError);
  });

  it('refuses a cycle as JSON.stringify does', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => holdsUnstorableText(cyclic)).toThrow(TypeError);
  });
});
