import { describe, expect, it } from 'vitest';
import { classify } from './json-rpc';

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
