import { describe, expect, it } from 'vitest';
import { PatternInputTooLongError, UnsupportedPatternError, re2Engine } from './re2-engine';

describe('the RE2 engine for agent patterns', () => {
  const engine = re2Engine(65_536);

  it('matches what JavaScript matches for ordinary patterns', () => {
    const patterns = [
      '^[a-z]+$',
      '^\\d{4}-\\d{2}-\\d{2}$',
      '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
      'abc',
      '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$',
      '^\\u00e9+$',
      '^\\p{Lu}',
      '^(?<year>\\d{4})$',
      '^https?://',
      '\\.json$',
      '^a|b$',
    ];
    const inputs = [
      '',
      'abc',
      'ABC',
      '2024-01-31',
      'a@b.co',
      'é',
      'éé',
      'Élan',
      '1999',
      'https://x',
      'x.json',
      'xb',
      'ab\n',
    ];
    for (const pattern of patterns) {
      const js = new RegExp(pattern, 'u');
      const re2 = engine(pattern, 'u');
      for (const input of inputs) expect([pattern, input, re2.test(input)]).toEqual([pattern, input, js.test(input)]);
    }
  });

  it('refuses backreferences, lookaround and patterns that are not ECMA-262', () => {
    for (const pattern of ['^(a)\\1$', '^(?=a)', '(?!a)b', '(?<=a)b', '(?<!a)b', '[', 'a{1001}']) {
      expect(() => engine(pattern, 'u'), pattern).toThrow(UnsupportedPatternError);
    }
    expect(() => engine('(a)\\1', 'u')).toThrow(/backreferences and lookaround/);
  });

  it('refuses a pattern whose program is too large', () => {
    expect(() => engine('[a-z]{1000}[a-z]{1000}', 'u')).toThrow(/RE2 instructions/);
  });

  it('runs ^(a+)+$ on hostile input in linear time', () => {
    const re2 = engine('^(a+)+$', 'u');
    const started = performance.now();
    expect(re2.test(`${'a'.repeat(65_535)}!`)).toBe(false);
    expect(re2.test('a'.repeat(65_536))).toBe(true);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('refuses an input over the cap', () => {
    expect(() => re2Engine(10)('a', 'u').test('a'.repeat(11))).toThrow(PatternInputTooLongError);
  });

  it('names patterns apart, as ajv keys them by toString()', () => {
    expect(String(engine('a', 'u'))).not.toBe(String(engine('b', 'u')));
  });
});
