import { describe, expect, it } from 'vitest';
import type { HeaderParam } from '../../catalogue/header-params';
import { decodeHeaderValue } from '../protocol/header-value';
import { paramHeaderMismatch } from './param-headers';

const REGION: HeaderParam = { name: 'Region', path: ['region'], type: 'string' };
const MAX: HeaderParam = { name: 'Max', path: ['limits', 'max'], type: 'integer' };
const DRY: HeaderParam = { name: 'Dry', path: ['dry'], type: 'boolean' };
const b64 = (text: string) => `=?base64?${Buffer.from(text).toString('base64')}?=`;

describe('Mcp-Param-* headers against the body (SEP-2243)', () => {
  it('accepts headers that agree with the body, literal or Base64', () => {
    expect(paramHeaderMismatch([REGION], { region: 'us-west1' }, { 'mcp-param-region': 'us-west1' })).toBeUndefined();
    expect(paramHeaderMismatch([REGION], { region: 'Hello, 世界' }, { 'mcp-param-region': b64('Hello, 世界') })).toBe(
      undefined,
    );
    expect(paramHeaderMismatch([REGION], { region: ' padded ' }, { 'mcp-param-region': b64(' padded ') })).toBe(
      undefined,
    );
    expect(paramHeaderMismatch([MAX], { limits: { max: 42 } }, { 'mcp-param-max': '42.0' })).toBeUndefined();
    expect(paramHeaderMismatch([DRY], { dry: false }, { 'mcp-param-dry': 'false' })).toBeUndefined();
  });

  it('takes a value without the whole sentinel as a literal', () => {
    const value = Buffer.from('Hello').toString('base64');
    expect(paramHeaderMismatch([REGION], { region: value }, { 'mcp-param-region': value })).toBeUndefined();
    expect(
      paramHeaderMismatch([REGION], { region: `=?base64?${value}` }, { 'mcp-param-region': `=?base64?${value}` }),
    ).toBe(undefined);
    expect(paramHeaderMismatch([REGION], { region: 'Hello' }, { 'mcp-param-region': value })).toMatch(/does not match/);
  });

  it('expects no header when the body has no value (absent or null)', () => {
    expect(paramHeaderMismatch([REGION], {}, {})).toBeUndefined();
    expect(paramHeaderMismatch([REGION], { region: null }, {})).toBeUndefined();
    expect(paramHeaderMismatch([MAX], { limits: 'none' }, {})).toBeUndefined();
  });

  it.each([
    ['a missing header', { region: 'eu' }, {}, /Mcp-Param-Region is missing/],
    ['another value', { region: 'eu' }, { 'mcp-param-region': 'us' }, /does not match/],
    ['a header without a body value', {}, { 'mcp-param-region': 'us' }, /does not match/],
    ['bad Base64 padding', { region: 'Hello' }, { 'mcp-param-region': '=?base64?SGVsbG8?=' }, /not valid Base64/],
    [
      'bad Base64 characters',
      { region: 'Hello' },
      { 'mcp-param-region': '=?base64?SGVs!!!bG8=?=' },
      /not valid Base64/,
    ],
    ['a raw non-ASCII value', { region: 'é' }, { 'mcp-param-region': 'é' }, /may not carry unencoded/],
    ['a repeated header', { region: 'eu' }, { 'mcp-param-region': ['eu', 'eu'] }, /more than once/],
    ['an integer as text', { limits: { max: '42' } }, { 'mcp-param-max': '42' }, /does not match/],
    ['a boolean in capitals', { dry: true }, { 'mcp-param-dry': 'True' }, /does not match/],
  ])('refuses %s', (_case, args, headers, reason) => {
    expect(paramHeaderMismatch([REGION, MAX, DRY], args, headers)).toMatch(reason);
  });

  it('decodes only valid Base64 of UTF-8', () => {
    expect(decodeHeaderValue(b64('=?base64?literal?='))).toEqual({ ok: true, value: '=?base64?literal?=' });
    expect(decodeHeaderValue('=?base64?/w==?=')).toMatchObject({ ok: false });
  });
});
