import { describe, expect, it } from 'vitest';
import { headerParamsOf } from './header-params';

const tool = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  ...extra,
});

describe('x-mcp-header annotations', () => {
  it('lists string, integer and boolean parameters reached through properties, nested ones too', () => {
    expect(
      headerParamsOf(
        tool({
          region: { type: 'string', 'x-mcp-header': 'Region' },
          limits: { type: 'object', properties: { max: { type: 'integer', 'x-mcp-header': 'Max' } } },
          dry: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
          query: { type: 'string' },
        }),
      ),
    ).toEqual(
      expect.arrayContaining([
        { name: 'Region', path: ['region'], type: 'string' },
        { name: 'Max', path: ['limits', 'max'], type: 'integer' },
        { name: 'Dry-Run', path: ['dry'], type: 'boolean' },
      ]),
    );
    expect(headerParamsOf(tool({ query: { type: 'string' } }))).toEqual([]);
  });

  it.each([
    ['an empty name', tool({ a: { type: 'string', 'x-mcp-header': '' } }), /header name token/],
    ['a name with a space', tool({ a: { type: 'string', 'x-mcp-header': 'Re gion' } }), /header name token/],
    ['a non-ASCII name', tool({ a: { type: 'string', 'x-mcp-header': 'Région' } }), /header name token/],
    ['a control character', tool({ a: { type: 'string', 'x-mcp-header': 'Region\r\n1' } }), /header name token/],
    ['a number parameter', tool({ a: { type: 'number', 'x-mcp-header': 'A' } }), /string, integer or boolean/],
    ['an object parameter', tool({ a: { type: 'object', 'x-mcp-header': 'A' } }), /string, integer or boolean/],
    [
      'a name used twice, in another case',
      tool({ a: { type: 'string', 'x-mcp-header': 'Region' }, b: { type: 'string', 'x-mcp-header': 'REGION' } }),
      /used twice/,
    ],
    [
      'an annotation under items',
      tool({ a: { type: 'array', items: { type: 'string', 'x-mcp-header': 'A' } } }),
      /through "properties"/,
    ],
    [
      'an annotation under anyOf',
      tool({}, { anyOf: [{ properties: { a: { type: 'string', 'x-mcp-header': 'A' } } }] }),
      /through "properties"/,
    ],
    [
      'an annotation in $defs',
      tool({}, { $defs: { a: { type: 'string', 'x-mcp-header': 'A' } } }),
      /through "properties"/,
    ],
  ])('refuses %s', (_case, schema, reason) => {
    expect(() => headerParamsOf(schema)).toThrow(reason);
  });
});
