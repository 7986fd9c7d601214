import { describe, expect, it } from 'vitest';
import { jsonDeeperThan, MAX_JSON_DEPTH } from './json-depth';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('jsonDeeperThan', () => {
  it('measures arrays and objects alike, up to the limit', () => {
    expect(jsonDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(jsonDeeperThan('{"a":{"b":[1]}}', 3)).toBe(false);
    expect(jsonDeeperThan('{"a":{"b":[{}]}}', 3)).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(jsonDeeperThan(JSON.stringify({ text: '[[[[{{{{', quoted: 'say \\"[[[[\\"' }), 1)).toBe(false);
    expect(jsonDeeperThan(JSON.stringify(['\\', ['x']]), 1)).toBe(true);
  });

  it('takes 100,000 levels without recursing', () => {
    expect(jsonDeeperThan(nested(100_000))).toBe(true);
  });
});
