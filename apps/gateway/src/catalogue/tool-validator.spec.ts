import { describe, expect, it } from 'vitest';
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
});
