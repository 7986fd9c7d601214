import { decodeJson, encodeJson } from '@mcpgw/bus';
import { ATTEMPTS_EXHAUSTED, BusPattern, callIdOf, type ListedCall, type StoredCall } from '@mcpgw/contracts';
import { Stack, isolatedEnvironment, type Isolation } from '@mcpgw/devstack';
import { headers as natsHeaders } from 'nats';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

type Json = Record<string, any>;

/**
 * The operator's views (src/conversations): calls with their outcomes, as
 * SQL judges them from the stored replies, filtered and paged; channels with
 * their counts; one channel's turns. Over the REST mirror, and over the bus
 * with the trace id a post carried.
 */
describe('calls and channels, as the operator reads them', () => {
  let isolation: Isolation;
  let stack: Stack;
  let base: string;
  /** Agents of this run only: the tests share a database with nothing else, but stay to their own rows. */
  const agentA = `conv-a-${randomBytes(3).toString('hex')}`;
  const agentB = `conv-b-${randomBytes(3).toString('hex')}`;
  const posted: Record<string, { channelId: string; messageId: string }> = {};

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${stack.messageServiceToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };
  const ok = async (method: string, path: string, body?: unknown) => {
    const answer = await call(method, path, body);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
    return answer.body;
  };

  /** A tool call on a new channel (or `channelId`), answered with `reply` unless it is undefined. */
  const toolCall = async (
    name: string,
    opts: { agent?: string; tool?: string; caller?: string; channelId?: string; reply?: Json },
  ) => {
    const agent = opts.agent ?? agentA;
    const channelId = opts.channelId ?? (await ok('POST', '/channels', { agent_id: agent })).id;
    const id = randomUUID();
    await ok('POST', `/channels/${channelId}/messages`, {
      type: 'chat_message',
      id,
      channel_id: channelId,
      agent_id: agent,
      sender: { kind: 'mcp_client', id: opts.caller ?? 'apikey:one' },
      created_at: new Date().toISOString(),
      tool_call: { name: opts.tool ?? 'echo', arguments: { text: name } },
      call_id: `call-of-${name}`,
    });
    if (opts.reply) {
      await ok('POST', `/channels/${channelId}/messages`, {
        type: 'agent_reply',
        id: randomUUID(),
        channel_id: channelId,
        agent_id: agent,
        in_reply_to: id,
        created_at: new Date().toISOString(),
        content: [{ type: 'text', text: `reply to ${name}` }],
        ...opts.reply,
      });
    }
    posted[name] = { channelId, messageId: id };
    return channelId as string;
  };

  const list = async (query: string) => (await ok('GET', `/calls?${query}`)) as { calls: ListedCall[]; more: boolean };
  const names = (calls: ListedCall[]) => calls.map((c) => c.call_id.replace(/^call-of-/, ''));

  beforeAll(async () => {
    isolation = await isolatedEnvironment('conversations', { migrated: true });
    stack = new Stack(isolation);
    base = (await stack.startMessageService()).url;
    // Oldest first: `ok`, a tool error, two failures, one unanswered, another agent's, another caller's.
    const session = await toolCall('ok', { reply: {} });
    await toolCall('tool-error', { reply: { is_error: true } });
    await toolCall('protocol-error', { reply: { meta: { protocol_error: { code: -32602, message: 'bad' } } } });
    await toolCall('exhausted', { reply: { is_error: true, meta: { outcome: ATTEMPTS_EXHAUSTED } } });
    await toolCall('unanswered', {});
    await toolCall('other-agent', { agent: agentB, reply: {} });
    await toolCall('other-caller', { caller: 'apikey:two', tool: 'search', channelId: session, reply: {} });
    // A plain message on the session's channel: a turn of it, not a call.
    await ok('POST', `/channels/${session}/messages`, {
      type: 'chat_message',
      id: randomUUID(),
      channel_id: session,
      agent_id: agentA,
      sender: { kind: 'user', id: 'apikey:one' },
      created_at: new Date().toISOString(),
      text: 'hello',
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await isolation?.remove();
  });

  it('lists tool calls newest first, each with how it ended, as SQL reads the reply', async () => {
    const { calls, more } = await list(`agent_id=${agentA}`);
    expect(more).toBe(false);
    expect(names(calls)).toEqual(['other-caller', 'unanswered', 'exhausted', 'protocol-error', 'tool-error', 'ok']);
    expect(Object.fromEntries(calls.map((c) => [c.call_id, c.outcome]))).toEqual({
      'call-of-other-caller': 'ok',
      'call-of-unanswered': 'no_reply',
      'call-of-exhausted': 'failed',
      'call-of-protocol-error': 'failed',
      'call-of-tool-error': 'tool_error',
      'call-of-ok': 'ok',
    });
    const [first] = calls;
    expect(first).toMatchObject({
      agent_id: agentA,
      tool: 'search',
      caller_id: 'apikey:two',
      channel_id: posted['other-caller'].channelId,
      message_id: posted['other-caller'].messageId,
      trace_id: null,
      reply_stored_at: expect.any(String),
    });
    expect(Date.parse(first.stored_at)).toBeGreaterThanOrEqual(Date.parse(first.posted_at) - 1_000);
    expect(calls.find((c) => c.outcome === 'no_reply')?.reply_stored_at).toBeNull();
  });

  it('filters by agent, tool, caller and outcome, together too', async () => {
    expect(names((await list(`agent_id=${agentB}`)).calls)).toEqual(['other-agent']);
    expect(names((await list(`agent_id=${agentA}&outcome=failed`)).calls)).toEqual(['exhausted', 'protocol-error']);
    expect(names((await list(`agent_id=${agentA}&outcome=no_reply`)).calls)).toEqual(['unanswered']);
    expect(names((await list(`agent_id=${agentA}&tool=search`)).calls)).toEqual(['other-caller']);
    expect(names((await list(`caller_id=apikey:two&agent_id=${agentA}`)).calls)).toEqual(['other-caller']);
    expect(names((await list(`agent_id=${agentA}&outcome=ok&caller_id=apikey:one`)).calls)).toEqual(['ok']);
  });

  it('pages with before: every call once, `more` until the last page', async () => {
    const seen: string[] = [];
    let before = '';
    for (let page = 0; page < 10; page++) {
      const { calls, more } = await list(`agent_id=${agentA}&limit=4${before}`);
      seen.push(...names(calls));
      if (!more) break;
      before = `&before=${calls.at(-1)!.seq}`;
    }
    expect(seen).toEqual(['other-caller', 'unanswered', 'exhausted', 'protocol-error', 'tool-error', 'ok']);
  });

  it('lists channels newest first with what they hold, and pages them', async () => {
    const { channels, more } = await ok('GET', `/channels?agent_id=${agentA}`);
    expect(more).toBe(false);
    expect(channels).toHaveLength(5);
    const session = channels.find((c: Json) => c.id === posted.ok.channelId);
    // Two calls with their replies and a plain message.
    expect(session).toMatchObject({ agent_id: agentA, messages: 5, caller_id: 'apikey:one' });
    expect(Date.parse(session.last_message_at)).toBeGreaterThanOrEqual(Date.parse(session.created_at));
    const first = await ok('GET', `/channels?agent_id=${agentA}&limit=3`);
    const rest = await ok('GET', `/channels?agent_id=${agentA}&limit=3&before=${first.channels.at(-1).id}`);
    expect(first.more).toBe(true);
    expect([...first.channels, ...rest.channels].map((c: Json) => c.id)).toEqual(channels.map((c: Json) => c.id));
    expect(rest.more).toBe(false);
  });

  it("shows a channel's turns newest first: each chat_message with its reply and outcome", async () => {
    const { channel, calls, more } = (await ok('GET', `/channels/${posted.ok.channelId}/calls`)) as {
      channel: Json;
      calls: StoredCall[];
      more: boolean;
    };
    expect(channel).toMatchObject({ id: posted.ok.channelId, messages: 5 });
    expect(more).toBe(false);
    expect(calls.map((c) => [c.message.envelope.type, c.reply?.envelope.type ?? null, c.outcome])).toEqual([
      ['chat_message', null, 'no_reply'],
      ['chat_message', 'agent_reply', 'ok'],
      ['chat_message', 'agent_reply', 'ok'],
    ]);
    expect(calls[1].reply).toMatchObject({ sender: 'rest', stored_at: expect.any(String) });
    const older = await ok('GET', `/channels/${posted.ok.channelId}/calls?limit=1&before=${calls[1].message.seq}`);
    expect(older.calls.map((c: StoredCall) => c.message.envelope.id)).toEqual([posted.ok.messageId]);
    expect(older.more).toBe(false);
  });

  it('refuses bad filters and pages (400), and an unknown channel (404)', async () => {
    for (const query of [
      'limit=0',
      'limit=201',
      'limit=ten',
      'outcome=maybe',
      'agent_id=not%20an%20agent',
      'before=-1',
      'before=1.5',
      'tool=a%00b',
      `caller_id=${'x'.repeat(201)}`,
      'tool=a&tool=b',
    ]) {
      const refused = await call('GET', `/calls?${query}`);
      expect(refused.status, query).toBe(400);
    }
    expect((await call('GET', '/channels?before=not-a-channel')).status).toBe(400);
    expect((await call('GET', '/channels/not-a-channel/calls')).status).toBe(400);
    expect((await call('GET', `/channels/${randomUUID()}/calls`)).status).toBe(404);
  });

  it('over the bus: keeps the trace id a post carried (its traceparent), and names it with the call', async () => {
    const nc = await isolation.connectNats();
    try {
      const ask = async (pattern: string, payload: unknown, traceparent?: string) => {
        const headers = natsHeaders();
        if (traceparent) headers.set('traceparent', traceparent);
        const answer = await nc.request(`${isolation.busPrefix}.${pattern}`, encodeJson(payload), {
          timeout: 5_000,
          headers,
        });
        return decodeJson(answer.data) as { ok: boolean; data: Json };
      };
      const traceId = randomBytes(16).toString('hex');
      const id = randomUUID();
      const envelope = {
        type: 'chat_message',
        id,
        agent_id: agentB,
        sender: { kind: 'mcp_client', id: 'apikey:traced' },
        created_at: new Date().toISOString(),
        tool_call: { name: 'echo', arguments: {} },
      };
      const stored = await ask(BusPattern.PostMessage, { envelope }, `00-${traceId}-${'1'.repeat(16)}-01`);
      expect(stored.ok).toBe(true);
      const listed = await ask(BusPattern.ListCalls, { agent_id: agentB, caller_id: 'apikey:traced' });
      // No call_id in the envelope: the gateway's id made from the message id.
      expect(listed.data.calls).toEqual([expect.objectContaining({ call_id: callIdOf(id), trace_id: traceId })]);
      const found = await ask(BusPattern.FindCall, { call_id: callIdOf(id) });
      expect(found.data.calls).toEqual([expect.objectContaining({ trace_id: traceId, outcome: 'no_reply' })]);
      const bad = await ask(BusPattern.ListCalls, { limit: 1000 });
      expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
    } finally {
      await nc.close();
    }
  });
});
