import { startTestStack, type TestStack } from '@mcpgw/devstack';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const STATELESS = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': STATELESS,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'retention-test', version: '1.0.0' },
};
const RETENTION_S = 2;
/** Long enough for a channel idle since now to expire and a purge round to find it. */
const UNTIL_PURGED_MS = RETENTION_S * 1_000 + 1_500;

/**
 * What still names a channel once retention deleted it (apps/message-service/src/retention/README.md):
 * a session gets a clear error and ends, a conversation handle a clear error,
 * an idempotency key its stored result. Retention of seconds, set by env.
 */
describe('after retention deleted a conversation', () => {
  let env: TestStack;

  const post = async (body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(env.mcpUrl(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-agent-api-key': env.apiKey,
        ...headers,
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text.startsWith('{') ? JSON.parse(text) : text };
  };
  const initialize = async () => {
    const answer = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'retention-test', version: '1' } },
    });
    const session = answer.headers.get('mcp-session-id')!;
    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
    return headers;
  };
  const echo = (text: string, headers: Record<string, string>, meta?: Record<string, unknown>) =>
    post(
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text }, ...(meta ? { _meta: meta } : {}) },
      },
      headers,
    );
  const stateless = { 'mcp-protocol-version': STATELESS, 'mcp-method': 'tools/call', 'mcp-name': 'echo' };

  beforeAll(async () => {
    env = await startTestStack({
      env: {
        CHANNEL_RETENTION_SECONDS: String(RETENTION_S),
        SINGLE_CALL_RETENTION_SECONDS: String(RETENTION_S),
        RETENTION_PURGE_INTERVAL_MS: '300',
      },
      gatewayEnv: { CONVERSATION_HANDLE_SECRET: 'a-test-secret-of-at-least-32-characters!' },
    });
  });

  afterAll(async () => {
    await env?.stop();
  });

  it('a session whose channel was deleted: the call gets -32602 conversation_expired, then the session is gone (404)', async () => {
    const session = await initialize();
    expect((await echo('first', session)).body.result.content).toEqual([{ type: 'text', text: 'first' }]);
    await sleep(UNTIL_PURGED_MS);

    const after = await echo('second', session);
    expect(after.status).toBe(200);
    expect(after.body.error).toMatchObject({ code: -32602, data: { reason: 'conversation_expired' } });
    expect(after.body.error.message).toContain('expired');
    expect((await echo('third', session)).status).toBe(404);

    const fresh = await initialize();
    expect((await echo('again', fresh)).body.result.content).toEqual([{ type: 'text', text: 'again' }]);
  });

  it('a conversation handle of a deleted channel gets -32602 conversation_expired; without it a call starts anew', async () => {
    const first = await echo('one', stateless, META);
    const handle = first.body.result._meta['mcpgw/conversation'];
    expect(typeof handle).toBe('string');
    await sleep(UNTIL_PURGED_MS);

    const after = await echo('two', stateless, { ...META, 'mcpgw/conversation': handle });
    expect(after.body.error).toMatchObject({ code: -32602, data: { reason: 'conversation_expired' } });
    expect((await echo('three', stateless, META)).body.result.content).toEqual([{ type: 'text', text: 'three' }]);
  });

  it('an idempotency key whose call was deleted still replays its stored result', async () => {
    const key = randomUUID();
    const call = () =>
      post(
        {
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: 'echo', arguments: { text: 'keyed', idempotency_key: key }, _meta: META },
        },
        stateless,
      );
    expect((await call()).body.result.content).toEqual([{ type: 'text', text: 'keyed' }]);
    await sleep(UNTIL_PURGED_MS);
    const replay = await call();
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.result.content).toEqual([{ type: 'text', text: 'keyed' }]);
  });
});
