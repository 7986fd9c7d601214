import { afterEach, describe, expect, it, vi } from 'vitest';
import { markReplay, topLevelMember } from './replay';

/** What a replay used to send: the stored text parsed, marked and written again. */
function reserialized(text: string): string {
  const value = JSON.parse(text) as { _meta?: Record<string, unknown> };
  value._meta = { ...value._meta, 'mcpgw/idempotentReplay': true };
  return JSON.stringify(value);
}

const STORED = [
  {},
  { content: [{ type: 'text', text: 'plain' }] },
  {
    content: [{ type: 'text', text: '{"_meta":1, "}":"]"}' }],
    structuredContent: { _meta: { deep: true }, n: 1.5e-7 },
  },
  { resultType: 'complete', content: [], _meta: { 'mcpgw/conversation': 'handle.sig' } },
  { content: [], _meta: {}, isError: true },
  {
    content: [{ type: 'text', text: 'quote \\" and \u2028 and é' }],
    structuredContent: { list: [[], {}, [{ a: '}' }]] },
  },
  { _meta: { first: 1 }, after: { _meta: 'not this one' } },
].map((value) => JSON.stringify(value));

describe('markReplay', () => {
  afterEach(() => vi.restoreAllMocks());

  it.each(STORED)('sends the bytes a parse and a stringify would have: %s', (stored) => {
    expect(markReplay(stored)).toBe(reserialized(stored));
  });

  it('never parses the stored result (it is serialized once, when the call completes)', () => {
    const parse = vi.spyOn(JSON, 'parse');
    for (const stored of STORED) markReplay(stored);
    expect(parse).not.toHaveBeenCalled();
  });

  it('falls back to a parse only for a _meta that is no object, or one already marked', () => {
    for (const stored of [`{"_meta":null}`, `{"_meta":["x"]}`, `{"_meta":{"mcpgw/idempotentReplay":false,"z":1}}`]) {
      expect(markReplay(stored)).toBe(reserialized(stored));
    }
  });
});

describe('topLevelMember', () => {
  it('finds a member of the outermost object only, whatever strings and nesting come before it', () => {
    const text = '{"a":{"_meta":1},"s":"\\"_meta\\":2","_meta" : {"k":[1,{"}":2}]} ,"z":3}';
    const found = topLevelMember(text, '_meta')!;
    expect(text.slice(found.start, found.end)).toBe('{"k":[1,{"}":2}]}');
    expect(topLevelMember('{"a":{"_meta":1}}', '_meta')).toBeUndefined();
  });

  it('reads a name written with escapes', () => {
    const text = '{"\\u005fmeta":{"x":1}}';
    const found = topLevelMember(text, '_meta')!;
    expect(text.slice(found.start, found.end)).toBe('{"x":1}');
  });
});
