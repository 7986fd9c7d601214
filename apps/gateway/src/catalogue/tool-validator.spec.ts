import { describe, expect, it } from 'vitest';
import { DEFAULT_SCHEMA_LIMITS } from './schema-limits';
import { compileArgumentsValidator } from './tool-validator';

describe('tool argument validation', () => {
  const validate = compileArgumentsValidator({
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { query: { type: 'string' }, max_results: { type: 'integer', default: 5 } },
    required: ['query'],
    additionalProperties: false,
  });

  it('accepts valid arguments and fills defaults in', () => {
    const args: Record<string, unknown> = { query: 'q' };
    expect(validate(args)).toEqual([]);
    expect(args.max_results).toBe(5);
  });

  it('reports every problem, with its path', () => {
    expect(validate({ query: 1, max_results: 'x', extra: true })).toEqual(
      expect.arrayContaining([
        '/query must be string',
        '/max_results must be integer',
        '(arguments) must NOT have additional properties',
      ]),
    );
  });

  it('refuses a schema that is not valid JSON Schema', () => {
    expect(() => compileArgumentsValidator({ type: 'no-such-type' })).toThrow();
  });

  it('runs patterns and patternProperties on a linear-time engine', () => {
    const hostile = compileArgumentsValidator({
      type: 'object',
      properties: { text: { type: 'string', pattern: '^(a+)+$' } },
      patternProperties: { '^(x+)+$': { type: 'integer' } },
    });
    const started = performance.now();
    expect(hostile({ text: `${'a'.repeat(10_240)}!` })).toEqual(['/text must match pattern "^(a+)+$"']);
    expect(hostile({ [`${'x'.repeat(10_240)}!`]: 'not checked' })).toEqual([]);
    expect(hostile({ xxx: 'no' })).toEqual(['/xxx must be integer']);
    expect(hostile({ text: 'aaaa' })).toEqual([]);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('refuses a string over the cap that a pattern would test, naming it', () => {
    const capped = compileArgumentsValidator(
      { type: 'object', properties: { text: { type: 'string', pattern: '^a+$' }, free: { type: 'string' } } },
      { ...DEFAULT_SCHEMA_LIMITS, maxPatternInputChars: 100 },
    );
    expect(capped({ text: 'a'.repeat(100), free: 'b'.repeat(1000) })).toEqual([]);
    expect(capped({ text: 'a'.repeat(101) })).toEqual([
      '/text: a string of 101 characters is longer than the 100 allowed for a value checked against a pattern',
    ]);
  });

  it('refuses, at compile time, patterns RE2 cannot run, remote references, and schemas too big or deep', () => {
    const withPattern = (pattern: string) => ({ type: 'object', properties: { a: { type: 'string', pattern } } });
    expect(() => compileArgumentsValidator(withPattern('^(a)\\1$'))).toThrow(/backreferences and lookaround/);
    expect(() => compileArgumentsValidator(withPattern('^(?=a)'))).toThrow(/refused/);
    expect(() => compileArgumentsValidator({ $ref: 'https://example.com/schema.json' })).toThrow(/not local/);
    expect(() =>
      compileArgumentsValidator({ $defs: { a: { type: 'string' } }, properties: { a: { $ref: '#/$defs/a' } } }),
    ).not.toThrow();
    const big = { type: 'object', description: 'x'.repeat(DEFAULT_SCHEMA_LIMITS.maxBytes) };
    expect(() => compileArgumentsValidator(big)).toThrow(/bytes of JSON/);
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < DEFAULT_SCHEMA_LIMITS.maxDepth; i++) deep = { type: 'array', items: deep };
    expect(() => compileArgumentsValidator(deep)).toThrow(/deeper than/);
  });

  it('validates with every 2020-12 keyword: allOf, anyOf, oneOf, not, if/then/else, $defs, $anchor, $ref', () => {
    const check = compileArgumentsValidator({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: {
          $anchor: 'addressDef',
          type: 'object',
          properties: { zip: { type: 'string', pattern: '^[0-9]{5}$' } },
        },
      },
      properties: {
        home: { $ref: '#/$defs/address' },
        work: { $ref: '#addressDef' },
        contactMethod: { enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' },
        tier: { oneOf: [{ const: 'free' }, { const: 'paid' }] },
        nickname: { not: { const: 'admin' } },
      },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      then: { required: ['phone'] },
      else: { required: ['email'] },
    });
    expect(check({ contactMethod: 'phone', phone: '1', home: { zip: '12345' }, work: { zip: '54321' } })).toEqual([]);
    expect(check({})).toEqual(expect.arrayContaining(["(arguments) must have required property 'email'"]));
    expect(check({ contactMethod: 'phone', email: 'a@b' })).toEqual(
      expect.arrayContaining(["(arguments) must have required property 'phone'"]),
    );
    expect(check({ email: 'a@b', work: { zip: 'nope' } })).toEqual(['/work/zip must match pattern "^[0-9]{5}$"']);
    expect(check({ email: 'a@b', tier: 'gold' })).toEqual(
      expect.arrayContaining(['/tier must match exactly one schema in oneOf']),
    );
    expect(check({ email: 'a@b', nickname: 'admin' })).toEqual(['/nickname must NOT be valid']);
  });

  it('keeps RE2 under the composition keywords: a backtracking pattern inside anyOf is refused', () => {
    expect(() =>
      compileArgumentsValidator({
        type: 'object',
        anyOf: [{ properties: { a: { type: 'string', pattern: '^(a)\\1$' } } }],
      }),
    ).toThrow(/RE2/);
  });
});
