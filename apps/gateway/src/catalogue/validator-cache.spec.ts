import { describe, expect, it } from 'vitest';
import { DEFAULT_SCHEMA_LIMITS } from './schema-limits';
import { ValidatorCache } from './validator-cache';

const echo = () => ({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });

describe('ValidatorCache', () => {
  it('compiles a schema once, whichever agent registers it (same validator for an equal schema)', () => {
    const cache = new ValidatorCache(DEFAULT_SCHEMA_LIMITS);
    const [first] = cache.compileEach([echo()]);
    const [second] = cache.compileEach([
      { required: ['text'], properties: { text: { type: 'string' } }, type: 'object' },
    ]);
    expect(second).toBe(first);
    expect((first as (a: object) => string[])({})).toEqual(["(arguments) must have required property 'text'"]);
  });

  it('answers an invalid schema with its error, keeps nothing of it, and still compiles the rest of the batch', () => {
    const cache = new ValidatorCache(DEFAULT_SCHEMA_LIMITS);
    const [bad, good] = cache.compileEach([{ type: 'no-such-type' }, echo()]);
    expect(bad).toBeInstanceOf(Error);
    expect(typeof good).toBe('function');
    expect(cache.compileEach([{ type: 'no-such-type' }])[0]).not.toBe(bad);
  });

  it("keeps agents' schemas apart: the same $id with other content in two batches both compile", () => {
    const cache = new ValidatorCache(DEFAULT_SCHEMA_LIMITS);
    const a = cache.compileEach([{ $id: 'https://x/args', type: 'object', required: ['a'] }])[0];
    const b = cache.compileEach([{ $id: 'https://x/args', type: 'object', required: ['b'] }])[0];
    expect(typeof a).toBe('function');
    expect(typeof b).toBe('function');
    expect((b as (args: object) => string[])({ a: 1 })).toHaveLength(1);
  });

  it('forgets the least recently used schema past its capacity', () => {
    const cache = new ValidatorCache(DEFAULT_SCHEMA_LIMITS, 2);
    const schema = (n: number) => ({ type: 'object', title: `s${n}` });
    const [one] = cache.compileEach([schema(1)]);
    cache.compileEach([schema(2)]);
    cache.compileEach([schema(1)]); // used again: s2 is now the oldest
    cache.compileEach([schema(3)]);
    expect(cache.compileEach([schema(1)])[0]).toBe(one);
    expect(cache.compileEach([schema(2)])[0]).not.toBe(undefined);
  });
});
