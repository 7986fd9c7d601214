import { decodeJson, encodeJson } from '@mcpgw/bus';
import { BusPattern } from '@mcpgw/contracts';
import { Stack, isolatedEnvironment, parsePrometheus, type Isolation } from '@mcpgw/devstack';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The wait semantics over the REST mirror, with two replicas of the message service. */
describe('waiting for the reply to a message', () => {
  let isolation: Isolation;
  let stack: Stack;
  let replicaA: string;
  let replicaB: string;

  const call = async (base: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${stack.messageServiceToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };

  const chatMessage = (channelId: string) => ({
    type: 'chat_message',
    id: randomUUID(),
    agent_id: 'wait-agent',
    sender: { kind: 'user', id: 'tester' },
    created_at: new Date().toISOString(),
    text: 'hello?',
    channel_id: channelId,
  });

  const reply = (channelId: string, inReplyTo: string, text = 'hi!') => ({
    type: 'agent_reply',
    id: randomUUID(),
    channel_id: channelId,
    agent_id: 'wait-agent',
    in_reply_to: inReplyTo,
    created_at: new Date().toISOString(),
    content: [{ type: 'text', text }],
  });

  /** How many messages a replica is waiting for, from its /metrics. */
  const openWaits = async (base: string) => {
    const text = await (await fetch(`${stack.managementUrlOf(base)}/metrics`)).text();
    return parsePrometheus(text).find((sample) => sample.name === 'mcpgw_waits_open')?.value;
  };

  const newConversation = async () => {
    const channel = (await call(replicaA, 'POST', '/channels', { agent_id: 'wait-agent' })).body;
    const message = chatMessage(channel.id);
    expect((await call(replicaA, 'POST', `/channels/${channel.id}/messages`, message)).status).toBe(201);
    return { channelId: channel.id as string, message };
  };

  beforeAll(async () => {
    isolation = await isolatedEnvironment('wait', { migrated: true });
    stack = new Stack(isolation);
    replicaA = (await stack.startMessageService()).url;
    replicaB = (await stack.startMessageService()).url;
  });

  afterAll(async () => {
    await stack?.stop();
    await isolation?.remove();
  });

  it('a message holding U+0000 is refused alone (400), never failing the messages committed beside it', async () => {
    const { channelId } = await newConversation();
    const messages = Array.from({ length: 12 }, (_, i) => ({ ...chatMessage(channelId), text: `m${i}` }));
    messages[5].text = 'a\u0000b';
    const answers = await Promise.all(
      messages.map((message) => call(replicaA, 'POST', `/channels/${channelId}/messages`, message)),
    );
    expect(answers.map((answer) => answer.status)).toEqual(messages.map((_, i) => (i === 5 ? 400 : 201)));
    expect(JSON.stringify(answers[5].body)).toContain('U+0000');
    const stored = (await call(replicaA, 'GET', `/channels/${channelId}/messages?limit=50`)).body;
    expect(JSON.stringify(stored)).not.toContain('a\\u0000b');
  });

  it('the REST mirror answers only the service token', async () => {
    const create = (headers: Record<string, string>) =>
      fetch(`${replicaA}/channels`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ agent_id: 'demo-agent' }),
      });
    expect((await create({})).status).toBe(401);
    expect((await create({ authorization: `Bearer ${'x'.repeat(32)}` })).status).toBe(401);
    expect((await create({ authorization: `Bearer ${stack.messageServiceToken}` })).status).toBe(201);
  });

  it('finds a reply that arrived before the wait began', async () => {
    const { channelId, message } = await newConversation();
    await call(replicaB, 'POST', `/channels/${channelId}/messages`, reply(channelId, message.id, 'early'));
    const waited = await call(replicaA, 'POST', `/channels/${channelId}/wait`, {
      message_id: message.id,
      timeout_ms: 5_000,
    });
    expect(waited.body).toMatchObject({
      status: 'replied',
      reply: { in_reply_to: message.id, content: [{ text: 'early' }] },
    });
  });

  it('a reply stored through one replica wakes a waiter on the other', async () => {
    const { channelId, message } = await newConversation();
    const started = Date.now();
    const waiting = call(replicaA, 'POST', `/channels/${channelId}/wait`, {
      message_id: message.id,
      timeout_ms: 20_000,
    });
    await expect.poll(() => openWaits(replicaA)).toBe(1); // the wait is registered: the reply must wake it
    await call(replicaB, 'POST', `/channels/${channelId}/messages`, reply(channelId, message.id, 'late'));
    const waited = await waiting;
    expect(waited.body).toMatchObject({ status: 'replied', reply: { content: [{ text: 'late' }] } });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('is offered over NATS request/reply too', async () => {
    const { channelId, message } = await newConversation();
    await call(replicaB, 'POST', `/channels/${channelId}/messages`, reply(channelId, message.id, 'over the bus'));
    const nc = await isolation.connectNats();
    try {
      const answer = await nc.request(
        `${isolation.busPrefix}.${BusPattern.WaitForReply}`,
        encodeJson({ channel_id: channelId, message_id: message.id, timeout_ms: 1_000 }),
        { timeout: 5_000 },
      );
      expect(decodeJson(answer.data)).toMatchObject({
        ok: true,
        data: { status: 'replied', reply: { content: [{ text: 'over the bus' }] } },
      });
    } finally {
      await nc.close();
    }
  });

  it('times out when no reply comes', async () => {
    const { channelId, message } = await newConversation();
    const started = Date.now();
    const waited = await call(replicaB, 'POST', `/channels/${channelId}/wait`, {
      message_id: message.id,
      timeout_ms: 500,
    });
    expect(waited.body).toEqual({ status: 'timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
  });

  it('keeps the first reply when an agent answers twice', async () => {
    const { channelId, message } = await newConversation();
    const first = await call(
      replicaA,
      'POST',
      `/channels/${channelId}/messages`,
      reply(channelId, message.id, 'first'),
    );
    const second = await call(
      replicaB,
      'POST',
      `/channels/${channelId}/messages`,
      reply(channelId, message.id, 'second'),
    );
    expect(first.body.duplicate).toBe(false);
    expect(second.body.duplicate).toBe(true);
    const waited = await call(replicaB, 'POST', `/channels/${channelId}/wait`, {
      message_id: message.id,
      timeout_ms: 1_000,
    });
    expect(waited.body.reply.content).toEqual([{ type: 'text', text: 'first' }]);
  });

  it('lists a channel oldest first', async () => {
    const { channelId, message } = await newConversation();
    await call(replicaB, 'POST', `/channels/${channelId}/messages`, reply(channelId, message.id));
    const listed = await call(replicaA, 'GET', `/channels/${channelId}/messages`);
    expect(listed.body.messages.map((m: { envelope: { type: string } }) => m.envelope.type)).toEqual([
      'chat_message',
      'agent_reply',
    ]);
  });

  it.each([
    ['waiting on an unknown channel', 'POST', `/channels/${randomUUID()}/wait`, { message_id: randomUUID() }, 404],
    ['waiting with a malformed message id', 'POST', `/channels/${randomUUID()}/wait`, { message_id: 'nope' }, 400],
    ['listing an unknown channel', 'GET', `/channels/${randomUUID()}/messages`, undefined, 404],
    ['posting to a malformed channel id', 'POST', '/channels/abc/messages', { type: 'chat_message' }, 400],
    ['an envelope of an unknown type', 'POST', `/channels/${randomUUID()}/messages`, { type: 'gossip' }, 400],
    ['a channel for a malformed agent id', 'POST', '/channels', { agent_id: 'no spaces' }, 400],
  ])('%s is refused with a clear error', async (_what, method, path, body, status) => {
    const response = await call(replicaA, method, path, body);
    expect(response.status).toBe(status);
    expect(response.body.message).toEqual(expect.any(String));
    expect(JSON.stringify(response.body)).not.toMatch(/\n\s+at /);
  });

  it('refuses a reply to a message that is not on the channel', async () => {
    const { channelId } = await newConversation();
    const response = await call(replicaA, 'POST', `/channels/${channelId}/messages`, reply(channelId, randomUUID()));
    expect(response.status).toBe(404);
  });
});
