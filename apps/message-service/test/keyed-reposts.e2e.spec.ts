import { decodeJson, encodeJson } from '@mcpgw/bus';
import { BusPattern, KEY_REUSED } from '@mcpgw/contracts';
import { Stack, isolatedEnvironment, type Isolation } from '@mcpgw/devstack';
import type { NatsConnection } from 'nats';
import { Client as PgClient } from 'pg';
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A keyed call's chat_message carries its fingerprint (src/messages/README.md):
 * posted again with the same one, or with none, it joins the first posting; with
 * another, it is refused. No pod runs here: every wait ends at once (timeout 0).
 */
describe('a keyed message posted again', () => {
  let isolation: Isolation;
  let stack: Stack;
  let nc: NatsConnection;

  const postAndWait = async (envelope: unknown, fingerprint?: string) => {
    const body = { envelope, timeout_ms: 0, ...(fingerprint !== undefined && { fingerprint }) };
    const answer = await nc.request(`${isolation.busPrefix}.${BusPattern.PostAndWait}`, encodeJson(body), {
      timeout: 15_000,
    });
    return decodeJson(answer.data) as
      | { ok: true; data: { duplicate: boolean; channel_id: string } }
      | { ok: false; error: { code: string; message: string; details?: string[] } };
  };

  const chatMessage = (args: Record<string, unknown>) => ({
    type: 'chat_message',
    id: randomUUID(),
    agent_id: 'keyed-agent',
    sender: { kind: 'mcp_client', id: 'tester' },
    created_at: new Date().toISOString(),
    tool_call: { name: 'counter', arguments: args },
  });
  const fingerprintOf = (text: string) => createHash('sha256').update(text).digest('hex');

  beforeAll(async () => {
    isolation = await isolatedEnvironment('keyed-reposts', { migrated: true });
    stack = new Stack(isolation);
    await stack.startMessageService();
    nc = await isolation.connectNats();
  });

  afterAll(async () => {
    await nc?.close();
    await stack?.stop();
    await isolation?.remove();
  });

  it('joins the first posting with the same fingerprint or none, refuses another, and keeps the first', async () => {
    const first = chatMessage({ key: 'a' });
    const stored = await postAndWait(first, fingerprintOf('a'));
    expect(stored).toMatchObject({ ok: true, data: { duplicate: false } });

    expect(await postAndWait(first, fingerprintOf('a'))).toMatchObject({ ok: true, data: { duplicate: true } });
    expect(await postAndWait(first)).toMatchObject({ ok: true, data: { duplicate: true } });

    const other = { ...first, tool_call: { name: 'counter', arguments: { key: 'b' } } };
    const refused = await postAndWait(other, fingerprintOf('b'));
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_request', details: [KEY_REUSED] } });

    const db = new PgClient({ connectionString: isolation.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query(
        `SELECT envelope, encode(fingerprint, 'hex') AS fingerprint FROM messaging.messages WHERE id = $1`,
        [first.id],
      );
      expect(rows).toEqual([
        { envelope: expect.objectContaining({ tool_call: first.tool_call }), fingerprint: fingerprintOf('a') },
      ]);
    } finally {
      await db.end();
    }
  });

  it('a message first posted without a fingerprint joins whatever comes after (nothing to compare)', async () => {
    const first = chatMessage({ key: 'c' });
    expect(await postAndWait(first)).toMatchObject({ ok: true, data: { duplicate: false } });
    expect(await postAndWait(first, fingerprintOf('c'))).toMatchObject({ ok: true, data: { duplicate: true } });
  });

  it('a fingerprint that is not 64 lower-case hex digits is invalid_request, and nothing is stored', async () => {
    const message = chatMessage({ key: 'd' });
    for (const fingerprint of ['', 'ABC', fingerprintOf('d').toUpperCase(), 42]) {
      const answer = await postAndWait(message, fingerprint as string);
      expect(answer).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
    }
    expect(await postAndWait(message, fingerprintOf('d'))).toMatchObject({ ok: true, data: { duplicate: false } });
  });
});
