import { CALL_ID_META_KEY } from '@mcpgw/contracts';
import { connectMcp, freePort, mintGrant, startTestStack, type McpConnection, type TestStack } from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver, eventOf } from './support/webhook-receiver';

const RECEIVER_PORT = await freePort();
const ENV = {
  WEBHOOK_SECRET_KEY: 'call-ids-e2e-secret-key-0123456789abcdef012345',
  WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${RECEIVER_PORT}`,
};

/** What `npm run admin -- call show <id> --json` prints. */
interface Shown {
  call_id: string;
  calls: {
    agent_id: string;
    tool: string;
    caller_id: string;
    channel_id: string;
    message_id: string;
    outcome: string;
    pod_id: string | null;
    timings: {
      posted_at: string;
      hops_ms: Record<
        'gateway_to_message_service' | 'message_service_to_agent_reply' | 'agent_reply_to_stored',
        number
      >;
      total_ms: number;
    };
    idempotency: { key: string; replays_stored_result: boolean } | null;
  }[];
}

/**
 * One call id from client to webhook (issue 28, item 1): every tools/call
 * gets one, returned on both surfaces, carried in the chat_message to the
 * agent, reported by webhooks, and found by `npm run admin -- call show`.
 */
describe('one call id, end to end', () => {
  let env: TestStack;
  let receiver: WebhookReceiver;
  let mcp: McpConnection;

  const callIdOf = (result: { _meta?: Record<string, unknown> }) => result._meta?.[CALL_ID_META_KEY] as string;
  const show = (callId: string) => env.stack.admin<Shown>('call', 'show', callId);
  /** The call ids the operator's webhook has heard, in order. */
  const heard = () => receiver.at('/all').map((r) => eventOf(r).data.call_id as string);
  const grantCall = async (grant: string, params: Record<string, unknown>) => {
    const response = await fetch(`${env.gatewayUrls[0]}/workspaces/demo/agents/${env.agentId}/mcp/http`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${grant}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };

  beforeAll(async () => {
    env = await startTestStack({ env: ENV, gatewayEnv: { WEBHOOK_POLL_INTERVAL_MS: '100' } });
    receiver = await new WebhookReceiver().start(RECEIVER_PORT);
    await env.stack.admin(
      'webhook',
      'add',
      '--agent',
      env.agentId,
      '--url',
      `http://127.0.0.1:${RECEIVER_PORT}/all`,
      '--events',
      'tool_call.completed,tool_call.failed',
    );
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
  });

  afterAll(async () => {
    await mcp?.close();
    await receiver?.stop();
    await env?.stop();
  });

  it('surface A: the result names the call; the webhook and `call show` name the same one', async () => {
    const result = await mcp.client.callTool({ name: 'echo', arguments: { text: 'one id' } });
    const callId = callIdOf(result);
    expect(callId).toMatch(/^call_[0-9a-f]{32}$/);
    await expect.poll(heard, { timeout: 10_000 }).toContain(callId);

    const { calls } = await show(callId);
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call).toMatchObject({
      agent_id: env.agentId,
      tool: 'echo',
      caller_id: `apikey:${env.apiKeyId}`,
      outcome: 'ok',
      idempotency: null,
    });
    expect(call.channel_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(call.pod_id).toBeTruthy();
    for (const hop of Object.values(call.timings.hops_ms)) expect(typeof hop).toBe('number');
    expect(call.timings.total_ms).toBeGreaterThanOrEqual(0);

    // The call's latency bucket carries it as its exemplar (OpenMetrics).
    const gateway = env.stack.processes.find((p) => p.running && p.name.startsWith('gateway'))!;
    const metrics = await fetch(`${gateway.managementUrl}/metrics`);
    expect(metrics.headers.get('content-type')).toMatch(/^application\/openmetrics-text/);
    expect(await metrics.text()).toMatch(
      new RegExp(
        `^mcpgw_tool_call_seconds_bucket\\{[^}]*surface="agent"[^}]*\\} \\d+ # \\{call_id="${callId}"\\}`,
        'm',
      ),
    );
  });

  it('a tool error has its id too, and `call show` says how it ended', async () => {
    const result = await mcp.client.callTool({ name: 'fail', arguments: { reason: 'on purpose' } });
    expect(result.isError).toBe(true);
    const callId = callIdOf(result);
    expect(callId).toMatch(/^call_[0-9a-f]{32}$/);
    await expect.poll(heard, { timeout: 10_000 }).toContain(callId);
    expect((await show(callId)).calls[0]).toMatchObject({ tool: 'fail', outcome: 'tool_error' });
  });

  it('an idempotent retry returns the first call’s id, and `call show` shows its record', async () => {
    const args = { name: 'counter', arguments: { idempotency_key: 'call-ids-key-1' } };
    const first = callIdOf(await mcp.client.callTool(args));
    const again = callIdOf(await mcp.client.callTool(args));
    expect(again).toBe(first);
    const { calls } = await show(first);
    expect(calls[0].idempotency).toMatchObject({ key: 'call-ids-key-1', replays_stored_result: true });
  });

  it("surface B: the caller's call_id is the call's id everywhere; without one, the gateway's", async () => {
    const grant = await mintGrant(env.grantKeyFile, { agentId: env.agentId, tools: ['echo'], taskId: 'T-call-ids' });
    const named = await grantCall(grant, { name: 'echo', arguments: { text: 'b' }, call_id: 'user_7:q3_summary' });
    expect(named.status).toBe(200);
    expect(named.body.result.structuredContent.call_id).toBe('user_7:q3_summary');
    await expect.poll(heard, { timeout: 10_000 }).toContain('user_7:q3_summary');
    // Found through the chat_message's call_id (no message id in it to go by).
    const { calls } = await show('user_7:q3_summary');
    expect(calls[0]).toMatchObject({ tool: 'echo', caller_id: expect.stringContaining('T-call-ids'), outcome: 'ok' });

    const unnamed = await grantCall(grant, { name: 'echo', arguments: { text: 'b' } });
    const callId = unnamed.body.result.structuredContent.call_id as string;
    expect(callId).toMatch(/^call_[0-9a-f]{32}$/);
    expect((await show(callId)).calls).toHaveLength(1);

    const bad = await grantCall(grant, { name: 'echo', arguments: { text: 'b' }, call_id: 'has a space' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe(-32602);
  });

  it('`call show` of an id nobody used says so', async () => {
    await expect(show('call_00000000000000000000000000000000')).rejects.toThrow(/no call call_0{32}/);
  });
});
