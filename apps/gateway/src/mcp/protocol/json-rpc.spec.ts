import { describe, expect, it, vi } from 'vitest';
import { batchText, classify, failure, rawResult } from './json-rpc';

describe('classify', () => {
  it.each([
    [{ jsonrpc: '2.0', id: 1, method: 'ping' }, 'request'],
    [{ jsonrpc: '2.0', id: 'a', method: 'tools/list', params: {} }, 'request'],
    [{ jsonrpc: '2.0', method: 'notifications/initialized' }, 'notification'],
    [{ jsonrpc: '2.0', id: 1, result: {} }, 'response'],
    [{ jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x' } }, 'response'],
    [{ jsonrpc: '1.0', id: 1, method: 'ping' }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1.5, method: 'ping' }, 'invalid'],
    [{ jsonrpc: '2.0', id: null, method: 'ping' }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1, method: '' }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1, method: 'ping', params: 'x' }, 'invalid'],
    [[], 'invalid'],
    [null, 'invalid'],
  ])('%j is a %s', (message, kind) => {
    expect(classify(message).kind).toBe(kind);
  });

  it('keeps the id of an invalid request when it can, to echo it', () => {
    expect(classify({ jsonrpc: '1.0', id: 'keep-me', method: 'ping' })).toMatchObject({ id: 'keep-me' });
  });
});

describe('batchText', () => {
  it('splices results that are JSON text already into the array, next to the responses it writes', () => {
    const stored = '{"content":[{"type":"text","text":"ok"}],"structuredContent":{"n":1}}';
    const responses = [rawResult(1, stored), failure(2, -32602, 'bad'), rawResult('x', '{}')];
    const parse = vi.spyOn(JSON, 'parse');
    const text = batchText(responses);
    expect(parse).not.toHaveBeenCalled();
    parse.mockRestore();
    expect(text).toBe(
      `[{"jsonrpc":"2.0","id":1,"result":${stored}},{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad"}},{"jsonrpc":"2.0","id":"x","result":{}}]`,
    );
    expect(JSON.parse(text)).toEqual([
      { jsonrpc: '2.0', id: 1, result: JSON.parse(stored) },
      { jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'bad' } },
      { jsonrpc: '2.0', id: 'x', result: {} },
    ]);
  });
});
