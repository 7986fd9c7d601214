import { decodeJson, encodeJson } from '@mcpgw/bus';
import { BusPattern, KEY_REUSED, agentSubject } from '@mcpgw/contracts';
import { Stack, isolatedEnvironment, type Isolation } from '@mcpgw/devstack';
import type { NatsConnection } from 'nats';
import { Client as PgClient } from 'pg';
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A keyed call's chat_message carries its fingerprint (src/messages/README.md):
 * posted again with the same one, or with none, it joins the first posting; with
 * another, it is refused. It carries its key too: a posting of another id with
 * the same key joins the one that holds it ("One key, one posting"). No pod runs
 * here: every wait ends at once (timeout 0), and replies are stored by hand.
 */
describe('a keyed message posted again', () => {
  let isolation: Isolation;
  let stack: Stack;
  let nc: NatsConnection;
  /** The agent's connection: the message service answers a reply's store in the agent's own inbox. */
  let agentNc: NatsConnection;

  type Answer<T> = { ok: true; data: T } | { ok: false; error: { code: string; message: string; details?: string[] } };
  const ask = async <T>(pattern: string, body: unknown, as = nc) => {
    const answer = await as.request(`${isolation.busPrefix}.${pattern}`, encodeJson(body), { timeout: 15_000 });
    return decodeJson(answer.data) as Answer<T>;
  };
  const postAndWait = (envelope: unknown, fingerprint?: string, key?: unknown, timeoutMs = 0) =>
    ask<{ duplicate: boolean; channel_id: string; posting?: unknown; result: unknown }>(BusPattern.PostAndWait, {
      envelope,
      timeout_ms: timeoutMs,
      ...(fingerprint !== undefined && { fingerprint }),
      ...(key !== undefined && { key }),
    });
  const keyOf = (ref: string, more: Record<string, unknown> = {}) => ({ ref, ttl_s: 3600, ...more });
  /** The agent's answer to a stored message, as its pod would store it. */
  const answer = (message: { id: string }, channelId: string, text: string) =>
    ask(
      agentSubject(BusPattern.StoreReply, 'keyed-agent'),
      {
        envelope: {
          type: 'agent_reply',
          id: randomUUID(),
          channel_id: channelId,
          agent_id: 'keyed-agent',
          in_reply_to: message.id,
          created_at: new Date().toISOString(),
          content: [{ type: 'text', text }],
        },
      },
      agentNc,
    );
  const rowsOf = async (sql: string, values: unknown[]) => {
    const db = new PgClient({ connectionString: isolation.databaseUrl });
    await db.connect();
    try {
      return (await db.query(sql, values)).rows;
    } finally {
      await db.end();
    }
  };
  const holderOf = async (ref: string) =>
    (await rowsOf('SELECT id FROM messaging.messages WHERE key_ref = $1', [ref])).map((row) => row.id);

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
    agentNc = await isolation.connectNats({ role: 'agent', agentId: 'keyed-agent' });
  });

  afterAll(async () => {
    await nc?.close();
    await agentNc?.close();
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

  it("joins the posting that holds its key, whatever its id, with that one's reply; another fingerprint is refused", async () => {
    const ref = randomUUID();
    const first = chatMessage({ key: 'k1' });
    const stored = await postAndWait(first, fingerprintOf('k1'), keyOf(ref));
    expect(stored).toMatchObject({ ok: true, data: { duplicate: false } });
    if (!stored.ok) return;
    expect(await answer(first, stored.data.channel_id, 'the first one ran')).toMatchObject({ ok: true });

    const second = chatMessage({ key: 'k1' });
    expect(await postAndWait(second, fingerprintOf('k1'), keyOf(ref))).toMatchObject({
      ok: true,
      data: {
        duplicate: true,
        channel_id: stored.data.channel_id,
        posting: { id: first.id, created_at: first.created_at },
        result: { status: 'replied', reply: { in_reply_to: first.id, content: [{ text: 'the first one ran' }] } },
      },
    });
    const other = chatMessage({ key: 'other' });
    expect(await postAndWait(other, fingerprintOf('other'), keyOf(ref))).toMatchObject({
      ok: false,
      error: { code: 'invalid_request', details: [KEY_REUSED] },
    });
    // Neither was stored, and the first still holds the key.
    expect(await rowsOf('SELECT id FROM messaging.messages WHERE id = ANY($1)', [[second.id, other.id]])).toEqual([]);
    expect(await holderOf(ref)).toEqual([first.id]);
  });

  it('a posting joined by its key and not answered yet waits for that one, and gets its reply when it comes', async () => {
    const ref = randomUUID();
    const first = chatMessage({ key: 'k2' });
    const stored = await postAndWait(first, fingerprintOf('k2'), keyOf(ref));
    expect(stored).toMatchObject({ ok: true });
    if (!stored.ok) return;
    const waiting = postAndWait(chatMessage({ key: 'k2' }), fingerprintOf('k2'), keyOf(ref), 10_000);
    // Answered while the second waits: only a wait on the holder's id hears it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await answer(first, stored.data.channel_id, 'answered while it waited')).toMatchObject({ ok: true });
    expect(await waiting).toMatchObject({
      ok: true,
      data: {
        duplicate: true,
        posting: { id: first.id },
        result: {
          status: 'replied',
          reply: { in_reply_to: first.id, content: [{ text: 'answered while it waited' }] },
        },
      },
    });
  });

  it("the holder lets go when it is older than the key's time to live, or when a post renews the key", async () => {
    const ref = randomUUID();
    const first = chatMessage({ key: 'k3' });
    expect(await postAndWait(first, fingerprintOf('k3'), keyOf(ref, { ttl_s: 1 }))).toMatchObject({ ok: true });
    const young = await postAndWait(chatMessage({ key: 'k3' }), fingerprintOf('k3'), keyOf(ref, { ttl_s: 1 }));
    expect(young).toMatchObject({ ok: true, data: { duplicate: true, posting: { id: first.id } } });

    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const afterTtl = chatMessage({ key: 'k3' });
    expect(await postAndWait(afterTtl, fingerprintOf('k3'), keyOf(ref, { ttl_s: 1 }))).toMatchObject({
      ok: true,
      data: { duplicate: false },
    });
    expect(await holderOf(ref)).toEqual([afterTtl.id]);

    // Renewing takes the key from a young holder; other content is welcome then (a new life of the key).
    const renewed = chatMessage({ key: 'k3-again' });
    expect(await postAndWait(renewed, fingerprintOf('k3-again'), keyOf(ref, { renews: true }))).toMatchObject({
      ok: true,
      data: { duplicate: false },
    });
    expect(await holderOf(ref)).toEqual([renewed.id]);
  });

  it('ForgetKey lets go of the key: the next posting with it is stored; a bad message id is invalid_request', async () => {
    const ref = randomUUID();
    const first = chatMessage({ key: 'k4' });
    expect(await postAndWait(first, fingerprintOf('k4'), keyOf(ref))).toMatchObject({ ok: true });
    expect(await ask(BusPattern.ForgetKey, { message_id: first.id })).toEqual({ ok: true, data: { forgotten: true } });
    expect(await ask(BusPattern.ForgetKey, { message_id: first.id })).toEqual({ ok: true, data: { forgotten: false } });
    expect(await ask(BusPattern.ForgetKey, { message_id: 'not-a-uuid' })).toMatchObject({
      ok: false,
      error: { code: 'invalid_request' },
    });
    const next = chatMessage({ key: 'k4' });
    expect(await postAndWait(next, fingerprintOf('k4'), keyOf(ref))).toMatchObject({
      ok: true,
      data: { duplicate: false },
    });
    expect(await holderOf(ref)).toEqual([next.id]);
  });

  it('a key that is not {ref: UUID, ttl_s: whole seconds, renews?: boolean} is invalid_request, and nothing is stored', async () => {
    const message = chatMessage({ key: 'k5' });
    const ref = randomUUID();
    for (const key of [
      'a key',
      null,
      { ref: 'not-a-uuid', ttl_s: 60 },
      { ref, ttl_s: 0 },
      { ref, ttl_s: 1.5 },
      { ref, ttl_s: 31 * 24 * 3600 },
      { ref, ttl_s: 60, renews: 'yes' },
    ]) {
      expect(await postAndWait(message, fingerprintOf('k5'), key)).toMatchObject({
        ok: false,
        error: { code: 'invalid_request' },
      });
    }
    expect(await rowsOf('SELECT id FROM messaging.messages WHERE id = $1', [message.id])).toEqual([]);
  });
});
