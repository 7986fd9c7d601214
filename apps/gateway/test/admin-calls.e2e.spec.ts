import { CALL_ID_META_KEY } from '@mcpgw/contracts';
import { connectMcp, freePort, startTestStack, type McpConnection, type TestStack } from '@mcpgw/devstack';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, type AdminJson } from './support/admin-client';
import { ResponseChecker, loadAdminOpenApi, routesTestedBy } from './support/admin-openapi';
import { startOtlpReceiver, type OtlpReceiver } from './support/otlp-receiver';

const ADMIN_PORT = await freePort();

/**
 * The management API's calls and channels (issue 29) on a real, traced stack:
 * calls made with the official MCP SDK client, then found in the list (with
 * filters and pages), shown with both messages and the time of each hop, and
 * read as the conversation of their session's channel. Every answer is checked
 * against docs/admin-openapi.yaml; the trace id is the one the gateway's span
 * exported; the CLI (`call list`, `call show`) answers alike.
 */
describe('management API: calls and channels', () => {
  const doc = loadAdminOpenApi();
  const checker = new ResponseChecker(doc);
  let env: TestStack;
  let receiver: OtlpReceiver;
  let mcp: McpConnection;
  let token: string;
  /** The calls made, oldest first, by name. */
  const made: Record<'echo' | 'fail' | 'counter' | 'secret', string> = {} as never;
  const admin = adminClient(`http://127.0.0.1:${ADMIN_PORT}`, checker, () => token);
  const cli = <T>(...args: string[]) => env.stack.admin<T>(...args);
  const callIdOf = (result: { _meta?: Record<string, unknown> }) => result._meta?.[CALL_ID_META_KEY] as string;
  const ours = (items: AdminJson[]) => items.filter((item) => Object.values(made).includes(item.call_id));

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    env = await startTestStack({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' },
      gatewayEnv: { ADMIN_PORT: String(ADMIN_PORT) },
    });
    token = (await cli<{ token: string }>('console', 'token', '--label', 'calls-e2e')).token;
    // One MCP session: its calls share its channel.
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
    made.echo = callIdOf(await mcp.client.callTool({ name: 'echo', arguments: { text: 'first' } }));
    made.fail = callIdOf(await mcp.client.callTool({ name: 'fail', arguments: { reason: 'on purpose' } }));
    made.counter = callIdOf(
      await mcp.client.callTool({ name: 'counter', arguments: { idempotency_key: 'calls-e2e-key' } }),
    );
    // A caller that pastes a key into its arguments: the operator's views never show it back.
    made.secret = callIdOf(await mcp.client.callTool({ name: 'echo', arguments: { text: `key ${env.apiKey}` } }));
  });

  afterAll(async () => {
    await mcp?.close();
    await env?.stop();
    receiver?.server.close();
  });

  it('lists recent calls newest first, with outcome, duration and the trace id the gateway exported', async () => {
    const { body, status } = await admin('GET', '/admin/v1/calls', { query: `agent_id=${env.agentId}` });
    expect(status).toBe(200);
    expect(ours(body.items).map((item) => item.call_id)).toEqual([made.secret, made.counter, made.fail, made.echo]);
    const byId = Object.fromEntries(body.items.map((item: AdminJson) => [item.call_id, item]));
    expect(byId[made.echo]).toMatchObject({
      agent_id: env.agentId,
      tool: 'echo',
      caller_id: `apikey:${env.apiKeyId}`,
      outcome: 'ok',
      duration_ms: expect.any(Number),
      trace_id: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(byId[made.fail]).toMatchObject({ tool: 'fail', outcome: 'tool_error' });
    expect(byId[made.counter]).toMatchObject({ tool: 'counter', outcome: 'ok' });

    // The trace id is that of the gateway's span for the call (the tracing backend finds it by that id).
    const spanOf = (callId: string) =>
      receiver.spans.find((s) => s.service === 'gateway' && s.attributes['mcpgw.call_id'] === callId);
    await expect.poll(() => spanOf(made.echo), { timeout: 15_000 }).toBeDefined();
    expect(byId[made.echo].trace_id).toBe(spanOf(made.echo)!.traceId);

    // The CLI reads the same operation.
    expect(await cli('call', 'list', '--agent', env.agentId)).toEqual(body);
  });

  it('filters by agent, tool, caller and outcome, and pages with next_before', async () => {
    const list = async (query: string) => (await admin('GET', '/admin/v1/calls', { query })).body;
    expect(ours((await list('tool=fail')).items).map((i) => i.call_id)).toEqual([made.fail]);
    expect(ours((await list(`outcome=tool_error&agent_id=${env.agentId}`)).items).map((i) => i.call_id)).toEqual([
      made.fail,
    ]);
    const byCaller = await list(`caller_id=${encodeURIComponent(`apikey:${env.apiKeyId}`)}&outcome=ok`);
    expect(ours(byCaller.items).map((i) => i.call_id)).toEqual([made.secret, made.counter, made.echo]);
    expect((await list('agent_id=another-agent')).items).toEqual([]);

    const all = (await list(`agent_id=${env.agentId}`)).items;
    const first = await list(`agent_id=${env.agentId}&limit=2`);
    expect(first.items).toEqual(all.slice(0, 2));
    expect(first.next_before).toMatch(/^\d+$/);
    const second = await list(`agent_id=${env.agentId}&limit=200&before=${first.next_before}`);
    expect([...first.items, ...second.items]).toEqual(all);
    expect(second.next_before).toBeNull();
  });

  it('shows one call: both messages with their envelopes, the time of each hop, its trace, as `call show` does', async () => {
    const { body } = await admin('GET', '/admin/v1/calls/{callId}', { params: { callId: made.echo } });
    expect(body.calls).toHaveLength(1);
    const [call] = body.calls;
    const listed = (await admin('GET', '/admin/v1/calls', { query: 'tool=echo' })).body.items.find(
      (item: AdminJson) => item.call_id === made.echo,
    );
    expect(call).toMatchObject({ ...listed, pod_id: expect.any(String), outcome_detail: null, idempotency: null });
    expect(call.message).toMatchObject({
      sender: 'gateway',
      envelope: { type: 'chat_message', id: call.message_id, call_id: made.echo, tool_call: { name: 'echo' } },
    });
    expect(call.reply).toMatchObject({
      sender: `agent:${env.agentId}`,
      envelope: { type: 'agent_reply', in_reply_to: call.message_id, content: [{ type: 'text', text: 'first' }] },
    });
    for (const hop of Object.values(call.timings.hops_ms)) expect(hop).toEqual(expect.any(Number));
    expect(call.timings.total_ms).toBe(call.duration_ms);
    expect(call.timings).toMatchObject({ stored_at: call.message.stored_at, reply_stored_at: call.reply.stored_at });
    expect(await cli('call', 'show', made.echo)).toEqual(body);

    const counter = (await admin('GET', '/admin/v1/calls/{callId}', { params: { callId: made.counter } })).body;
    expect(counter.calls[0].idempotency).toMatchObject({ key: 'calls-e2e-key', replays_stored_result: true });
  });

  it('never shows a secret a caller put in its arguments, in the call or in its channel', async () => {
    const { body } = await admin('GET', '/admin/v1/calls/{callId}', { params: { callId: made.secret } });
    const secret = env.apiKey.slice(17);
    const [, keyId] = /^bak_(.{12})_/.exec(env.apiKey)!;
    expect(JSON.stringify(body)).not.toContain(secret);
    expect(body.calls[0].message.envelope.tool_call.arguments.text).toBe(`key bak_${keyId}_…`);
    const channel = await admin('GET', '/admin/v1/channels/{channelId}/messages', {
      params: { channelId: body.calls[0].channel_id },
    });
    expect(JSON.stringify(channel.body)).not.toContain(secret);
  });

  it("lists channels, and reads the session's channel as a conversation: each message, its reply, each hop", async () => {
    const { channel_id: channelId } = (
      await admin('GET', '/admin/v1/calls/{callId}', { params: { callId: made.echo } })
    ).body.calls[0];
    const channels = (await admin('GET', '/admin/v1/channels', { query: `agent_id=${env.agentId}` })).body;
    expect(channels.items).toContainEqual({
      id: channelId,
      agent_id: env.agentId,
      created_at: expect.any(String),
      messages: 8,
      last_message_at: expect.any(String),
      caller_id: `apikey:${env.apiKeyId}`,
    });

    const route = '/admin/v1/channels/{channelId}/messages';
    const { body } = await admin('GET', route, { params: { channelId } });
    expect(body.channel).toMatchObject({ id: channelId, messages: 8 });
    expect(body.next_before).toBeNull();
    // Oldest first, as the conversation went.
    expect(body.items.map((turn: AdminJson) => turn.call_id)).toEqual([
      made.echo,
      made.fail,
      made.counter,
      made.secret,
    ]);
    for (const turn of body.items) {
      expect(turn).toMatchObject({ kind: 'tool_call', caller_id: `apikey:${env.apiKeyId}` });
      expect(turn.message.envelope).toMatchObject({ type: 'chat_message', channel_id: channelId });
      expect(turn.reply.envelope).toMatchObject({ type: 'agent_reply', in_reply_to: turn.message.envelope.id });
      expect(turn.timings.total_ms).toEqual(expect.any(Number));
      expect(turn.trace_id).toMatch(/^[0-9a-f]{32}$/);
    }
    expect(body.items[1]).toMatchObject({ name: 'fail', outcome: 'tool_error' });

    // A page of the latest two turns, then the two before them.
    const latest = (await admin('GET', route, { params: { channelId }, query: 'limit=2' })).body;
    expect(latest.items.map((t: AdminJson) => t.call_id)).toEqual([made.counter, made.secret]);
    const earlier = (await admin('GET', route, { params: { channelId }, query: `before=${latest.next_before}` })).body;
    expect(earlier.items.map((t: AdminJson) => t.call_id)).toEqual([made.echo, made.fail]);
    expect(earlier.next_before).toBeNull();
  });

  it('refuses bad filters, pages and ids with a documented 400; an unknown call or channel is 404', async () => {
    const refused = async (route: string, options: { query?: string; params?: Record<string, string> }) => {
      const answer = await admin('GET', route, options);
      expect(answer.status, `${route} ${JSON.stringify(options)}`).toBe(400);
      expect(answer.body).toMatchObject({ error: { code: 'invalid_request' } });
      expect(JSON.stringify(answer.body)).not.toMatch(/\n\s+at /);
      return answer.body.error.message as string;
    };
    for (const query of [
      'limit=0',
      'limit=201',
      'limit=ten',
      'outcome=maybe',
      'agent_id=not%20an%20agent',
      'before=abc',
      'before=0',
      'tool=a%00b',
      'tool=',
      `caller_id=${'x'.repeat(201)}`,
      'tool=a&tool=b',
    ]) {
      await refused('/admin/v1/calls', { query });
    }
    expect(await refused('/admin/v1/calls', { query: 'agnet=demo-agent' })).toMatch(/unknown parameter\(s\) agnet/);
    expect(await refused('/admin/v1/calls', { query: 'outcome=maybe' })).toMatch(/ok, tool_error, failed, no_reply/);
    for (const query of ['before=not-a-channel', 'limit=0', 'agent_id=a&agent_id=b', 'tool=echo']) {
      await refused('/admin/v1/channels', { query });
    }
    const route = '/admin/v1/channels/{channelId}/messages';
    await refused(route, { params: { channelId: 'not-a-channel' } });
    await refused(route, { params: { channelId: randomUUID() }, query: 'before=-1' });
    for (const callId of ['has a space', 'x'.repeat(300), 'é']) {
      await refused('/admin/v1/calls/{callId}', { params: { callId } });
    }
    const noCall = await admin('GET', '/admin/v1/calls/{callId}', {
      params: { callId: `call_${'0'.repeat(32)}` },
    });
    expect(noCall.status).toBe(404);
    expect(noCall.body).toMatchObject({ error: { code: 'not_found' } });
    const noChannel = await admin('GET', route, { params: { channelId: randomUUID() } });
    expect(noChannel.status).toBe(404);
    expect((await admin('GET', '/admin/v1/calls', { auth: null })).status).toBe(401);
    // Not on the public MCP port.
    const open = await fetch(`${env.gatewayUrls[0]}/admin/v1/calls`, { headers: { authorization: `Bearer ${token}` } });
    expect(open.status).toBe(404);
  });

  it('answered every documented operation of calls and channels, valid against its schema', () => {
    expect([...checker.succeeded].sort()).toEqual([...routesTestedBy(doc, 'admin-calls.e2e.spec.ts')].sort());
  });
});
