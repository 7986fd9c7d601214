import { freePort, startTestStack, type TestStack } from '@mcpgw/devstack';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver, eventOf } from './support/webhook-receiver';

const VERSION = '2026-07-28';
const SECRET = 'an-mrtr-test-secret-of-at-least-32-characters';
/** The webhook receiver's port, chosen first: WEBHOOK_ALLOWED_HOSTS admits a loopback receiver on the port it names only. */
const RECEIVER_PORT = await freePort();
const ALL_CAPABILITIES = { elicitation: {}, sampling: {}, roots: {} };
const meta = (capabilities: Record<string, unknown> = ALL_CAPABILITIES) => ({
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/clientInfo': { name: 'mrtr-test', version: '1.0.0' },
});

interface Answer {
  status: number;
  body: {
    result?: Record<string, unknown> & {
      resultType?: string;
      requestState?: string;
      inputRequests?: Record<string, { method: string; params: Record<string, unknown> }>;
      content?: { text?: string }[];
      messages?: { content: { text?: string } }[];
    };
    error?: { code: number; message: string };
  };
}

/**
 * Input-required results (MRTR, SEP-2322) through the bus, on two gateway
 * replicas that share CONVERSATION_HANDLE_SECRET: each retry goes to the
 * other replica, the agent's call stays in flight between rounds.
 */
describe('input-required results (2026-07-28)', () => {
  let env: TestStack;
  let id = 0;

  const post = async (gateway: number, method: string, params: Record<string, unknown>): Promise<Answer> => {
    const target = (params.name ?? params.uri) as string | undefined;
    const response = await fetch(env.mcpUrl(gateway), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-agent-api-key': env.apiKey,
        'mcp-protocol-version': VERSION,
        'mcp-method': method,
        ...(target ? { 'mcp-name': target } : {}),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params: { _meta: meta(), ...params } }),
    });
    return { status: response.status, body: (await response.json()) as Answer['body'] };
  };
  const call = (gateway: number, name: string, extra: Record<string, unknown> = {}) =>
    post(gateway, 'tools/call', { name, arguments: {}, ...extra });

  beforeAll(async () => {
    env = await startTestStack({
      gateways: 2,
      gatewayEnv: { CONVERSATION_HANDLE_SECRET: SECRET },
      // The admin CLI registers the test's webhook: it needs these too.
      env: {
        WEBHOOK_SECRET_KEY: 'an-mrtr-webhook-key-of-at-least-32-characters',
        WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${RECEIVER_PORT}`,
      },
    });
  });

  afterAll(async () => {
    await env?.stop();
  });

  it('answers with the questions, and the retry on the other replica completes the call', async () => {
    const first = await call(0, 'test_input_required_result_elicitation');
    expect(first.body.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { user_name: { method: 'elicitation/create' } },
    });
    expect(typeof first.body.result?.requestState).toBe('string');

    const done = await call(1, 'test_input_required_result_elicitation', {
      inputResponses: { user_name: { action: 'accept', content: { name: 'Alice' } } },
      requestState: first.body.result?.requestState,
    });
    expect(done.body.result).toMatchObject({ resultType: 'complete', content: [{ text: 'Hello, Alice!' }] });
  });

  it("reports a call an MRTR retry finished to the agent's webhooks, once, as one call", async () => {
    const receiver = await new WebhookReceiver().start(RECEIVER_PORT);
    try {
      const hook = await env.stack.admin<{ id: string }>(
        'webhook',
        'add',
        '--agent',
        env.agentId,
        '--url',
        receiver.url('/calls'),
        '--events',
        'tool_call.completed,tool_call.failed',
      );
      // Registration reaches every replica's index through the cache channel.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const first = await call(0, 'test_input_required_result_elicitation');
      const done = await call(1, 'test_input_required_result_elicitation', {
        inputResponses: { user_name: { action: 'accept', content: { name: 'Hook' } } },
        requestState: first.body.result?.requestState,
      });
      expect(done.body.result?.content?.[0].text).toBe('Hello, Hook!');
      const events = () =>
        receiver
          .at('/calls')
          .map(eventOf)
          .filter((event) => event.data.tool === 'test_input_required_result_elicitation');
      await expect.poll(() => events().length, { timeout: 10_000 }).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(events()).toHaveLength(1);
      expect(events()[0]).toMatchObject({
        type: 'tool_call.completed',
        data: { call_id: expect.any(String), result: { text: 'Hello, Hook!' } },
      });
      await env.stack.admin('webhook', 'remove', hook.id);
    } finally {
      await receiver.stop();
    }
  });

  it('asks questions asked together at once, and one after another in rounds, each on another replica', async () => {
    const together = await call(0, 'test_input_required_result_multiple_inputs');
    expect(Object.keys(together.body.result?.inputRequests ?? {}).sort()).toEqual([
      'client_roots',
      'greeting',
      'user_name',
    ]);
    const all = await call(1, 'test_input_required_result_multiple_inputs', {
      requestState: together.body.result?.requestState,
      inputResponses: {
        user_name: { action: 'accept', content: { name: 'Bea' } },
        greeting: { role: 'assistant', content: { type: 'text', text: 'Hi!' }, model: 'm', stopReason: 'endTurn' },
        client_roots: { roots: [{ uri: 'file:///a' }] },
      },
    });
    expect(all.body.result?.content?.[0].text).toBe('name=Bea; greeting=Hi!; roots=1');

    const one = await call(0, 'test_input_required_result_multi_round');
    expect(Object.keys(one.body.result?.inputRequests ?? {})).toEqual(['step1']);
    const two = await call(1, 'test_input_required_result_multi_round', {
      requestState: one.body.result?.requestState,
      inputResponses: { step1: { action: 'accept', content: { name: 'Cy' } } },
    });
    expect(two.body.result?.resultType).toBe('input_required');
    expect(Object.keys(two.body.result?.inputRequests ?? {})).toEqual(['step2']);
    expect(two.body.result?.requestState).not.toBe(one.body.result?.requestState);
    const three = await call(0, 'test_input_required_result_multi_round', {
      requestState: two.body.result?.requestState,
      inputResponses: { step2: { action: 'accept', content: { color: 'blue' } } },
    });
    expect(three.body.result?.content?.[0].text).toBe('Cy likes blue');
  });

  it('asks a missing answer again instead of failing', async () => {
    const first = await call(0, 'test_input_required_result_multiple_inputs');
    const partial = await call(1, 'test_input_required_result_multiple_inputs', {
      requestState: first.body.result?.requestState,
      inputResponses: {
        user_name: { action: 'accept', content: { name: 'Di' } },
        unknown_extra_key: { action: 'accept', content: {} },
      },
    });
    expect(partial.body.result?.resultType).toBe('input_required');
    expect(Object.keys(partial.body.result?.inputRequests ?? {}).sort()).toEqual(['client_roots', 'greeting']);
    const done = await call(0, 'test_input_required_result_multiple_inputs', {
      requestState: partial.body.result?.requestState,
      inputResponses: {
        greeting: { role: 'assistant', content: { type: 'text', text: 'Yo' }, model: 'm', stopReason: 'endTurn' },
        client_roots: { roots: [] },
      },
    });
    expect(done.body.result?.content?.[0].text).toBe('name=Di; greeting=Yo; roots=0');
  });

  it('works for prompts/get too', async () => {
    const first = await post(0, 'prompts/get', { name: 'test_input_required_result_prompt' });
    expect(first.body.result?.resultType).toBe('input_required');
    const done = await post(1, 'prompts/get', {
      name: 'test_input_required_result_prompt',
      requestState: first.body.result?.requestState,
      inputResponses: { prompt_context: { action: 'accept', content: { context: 'tea' } } },
    });
    expect(done.body.result).toMatchObject({ resultType: 'complete' });
    expect(done.body.result?.messages?.[0].content.text).toBe('Use this context: tea');
  });

  it('never asks for a capability the client did not declare', async () => {
    const response = await fetch(env.mcpUrl(0), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'x-agent-api-key': env.apiKey,
        'mcp-protocol-version': VERSION,
        'mcp-method': 'tools/call',
        'mcp-name': 'test_input_required_result_capabilities',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'test_input_required_result_capabilities', arguments: {}, _meta: meta({ sampling: {} }) },
      }),
    });
    const first = (await response.json()) as Answer['body'];
    expect(first.result?.resultType).toBe('input_required');
    expect(Object.values(first.result?.inputRequests ?? {}).map((q) => q.method)).toEqual(['sampling/createMessage']);

    // Declaring nothing: nothing is asked, and the agent hears it cannot ask.
    const none = await fetch(env.mcpUrl(1), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'x-agent-api-key': env.apiKey,
        'mcp-protocol-version': VERSION,
        'mcp-method': 'tools/call',
        'mcp-name': 'test_input_required_result_capabilities',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'test_input_required_result_capabilities', arguments: {}, _meta: meta({}) },
      }),
    });
    const answered = (await none.json()) as Answer['body'];
    expect(answered.result?.resultType).toBe('complete');
    expect(answered.result?.content?.[0].text).toMatch(/elicitation: unavailable.*sampling: unavailable/);
  });

  it('refuses a tampered, foreign, misused or expired requestState with -32602', async () => {
    const first = await call(0, 'test_input_required_result_tampered_state');
    const state = first.body.result?.requestState as string;
    const answers = { confirm: { action: 'accept', content: { ok: true } } };

    const tampered = await call(1, 'test_input_required_result_tampered_state', {
      requestState: `${state}-TAMPERED`,
      inputResponses: answers,
    });
    expect(tampered.body.error?.code).toBe(-32602);

    // Another request (other tool, same state): refused.
    const elsewhere = await call(1, 'test_input_required_result_request_state', {
      requestState: state,
      inputResponses: answers,
    });
    expect(elsewhere.body.error?.code).toBe(-32602);

    // A state sealed under the stack's key, but expired.
    const expired = sealLikeTheGateway(SECRET, {
      principal: `apikey:${env.apiKeyId}`,
      agentId: env.agentId,
      method: 'tools/call',
      digest: digestOf('test_input_required_result_tampered_state'),
      messageId: '00000000-0000-4000-8000-000000000000',
      channelId: '00000000-0000-4000-8000-000000000000',
      open: {},
      callEndsAt: Date.now() + 60_000,
      expiresAt: Date.now() - 1000,
    });
    const late = await call(1, 'test_input_required_result_tampered_state', {
      requestState: expired,
      inputResponses: answers,
    });
    expect(late.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/expired/) });

    // The genuine state still works.
    const done = await call(1, 'test_input_required_result_tampered_state', {
      requestState: state,
      inputResponses: answers,
    });
    expect(done.body.result?.content?.[0].text).toBe('confirmed=true');
  });

  it('the same skill asks a 2025-11-25 session inside its stream, as before (the agent does not know the revision)', async () => {
    const client = new Client({ name: 'older', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Old' } }));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(env.mcpUrl(1)), {
        requestInit: { headers: { 'X-Agent-API-Key': env.apiKey } },
      }),
    );
    try {
      const result = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} });
      expect(result.content).toEqual([{ type: 'text', text: 'Hello, Old!' }]);
    } finally {
      await client.close();
    }
  });

  it('refuses malformed inputResponses with -32602', async () => {
    const wrong = await call(0, 'test_input_required_result_elicitation', { inputResponses: { user_name: 12345 } });
    expect(wrong.body.error?.code).toBe(-32602);
  });
});

/** The gateway's requestState format (request-state.ts), sealed here to make a genuine but expired one. */
function sealLikeTheGateway(secret: string, state: Record<string, unknown>): string {
  const key = createHmac('sha256', Buffer.from(secret)).update('mcpgw request state v1').digest();
  const kid = `s${createHash('sha256').update(key).digest('base64url').slice(0, 8)}`;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(kid));
  const sealed = Buffer.concat([cipher.update(JSON.stringify(state), 'utf8'), cipher.final()]);
  return `${kid}.${Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url')}`;
}

function digestOf(name: string): string {
  return createHash('sha256')
    .update(`{"arguments":{},"name":${JSON.stringify(name)}}`)
    .digest('base64url');
}
