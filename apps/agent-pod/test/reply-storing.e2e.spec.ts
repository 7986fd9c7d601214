import { agentInboxState, startTestStack, type TestStack } from '@mcpgw/devstack';
import type { NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ACK_WAIT_MS = 1_500;
const MAX_DELIVER = 2;
const POD_ENV = { INBOX_ACK_WAIT_MS: String(ACK_WAIT_MS), INBOX_MAX_DELIVER: String(MAX_DELIVER), LOG_LEVEL: 'debug' };

/**
 * A skill runs once, whatever happens to its reply (inbox/README.md): a reply
 * the message service cannot take yet is kept and its post retried while the
 * pod holds the message, and no redelivery runs the skill again.
 */
describe('storing a reply', () => {
  let env: TestStack;
  let nc: NatsConnection;
  let messageServiceUrl: string;

  const inbox = () => agentInboxState(nc, env.stack.settings.busPrefix, env.agentId);

  /** The message service's REST mirror (the replica at `messageServiceUrl`). */
  const post = (path: string, body: unknown) =>
    fetch(`${messageServiceUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${env.stack.messageServiceToken}` },
      body: JSON.stringify(body),
    }).then((r) => r.json());

  const counterCall = (channelId: string, key: string) => ({
    type: 'chat_message',
    id: randomUUID(),
    channel_id: channelId,
    agent_id: env.agentId,
    sender: { kind: 'user', id: 'test' },
    created_at: new Date().toISOString(),
    tool_call: { name: 'counter', arguments: { key, delay_ms: 2_000 } },
  });

  beforeAll(async () => {
    env = await startTestStack({ pods: 1, podEnv: POD_ENV });
    nc = await env.connectNats();
    messageServiceUrl = env.messageServiceUrl;
  });

  afterAll(async () => {
    await nc?.close();
    await env?.stop();
  });

  it('the message service is down when the skill finishes: the skill runs once, the reply is stored when it is back', async () => {
    const key = `outage-${randomUUID()}`;
    const channel = await post('/channels', { agent_id: env.agentId });
    const before = await inbox();
    const message = counterCall(channel.id, key);
    await post(`/channels/${channel.id}/messages`, message);
    await expect.poll(inbox, { timeout: 10_000 }).toMatchObject({ ackPending: 1, deliveries: before.deliveries + 1 });

    // The only replica dies while the skill runs: its direct reply gets no answer, nobody acks. The
    // pod holds the message while it tries to store the reply at any replica: no redelivery, however
    // long the outage lasts.
    const replica = env.stack.processes.find((p) => p.name.startsWith('message-service') && p.running)!;
    await replica.kill();
    const pod = env.stack.processes.find((p) => p.name.startsWith('agent-pod') && p.running)!;
    await pod.waitForLog((l) => /did not confirm the reply/.test(String(l.msg)) && l.message_id === message.id, 10_000);
    await delay(3 * ACK_WAIT_MS); // the outage goes on, past more than one ack wait (and past INBOX_MAX_DELIVER)
    expect(await inbox()).toMatchObject({ ackPending: 1, deliveries: before.deliveries + 1 });

    messageServiceUrl = (await env.stack.startMessageService()).url;
    const waited = await post(`/channels/${channel.id}/wait`, { message_id: message.id, timeout_ms: 15_000 });
    expect(waited).toMatchObject({ status: 'replied', reply: { structured_content: { key, count: 1 } } });
    expect(waited.reply.is_error).toBeUndefined();
    await expect.poll(async () => (await inbox()).ackPending, { timeout: 10_000 }).toBe(0);

    // Ran once: the next run of the same counter is its second.
    const next = counterCall(channel.id, key);
    await post(`/channels/${channel.id}/messages`, next);
    const second = await post(`/channels/${channel.id}/wait`, { message_id: next.id, timeout_ms: 15_000 });
    expect(second).toMatchObject({ status: 'replied', reply: { structured_content: { key, count: 2 } } });
  });

  it(`pods that die in the skill, delivery after delivery: after ${MAX_DELIVER} attempts the caller gets an error reply, not a timeout`, async () => {
    const channel = await post('/channels', { agent_id: env.agentId });
    const message = { ...counterCall(channel.id, `dying-${randomUUID()}`) };
    message.tool_call.arguments.delay_ms = 30_000;
    await post(`/channels/${channel.id}/messages`, message);
    // Each attempt: a pod takes the message, starts the skill, and is killed in it.
    for (let attempt = 1; attempt <= MAX_DELIVER; attempt++) {
      const pod = env.stack.processes.find((p) => p.name.startsWith('agent-pod') && p.running)!;
      await pod.waitForLog((l) => l.msg === 'skill started' && l.message_id === message.id, 10_000);
      await pod.kill();
      await env.stack.startPod({ POD_ID: `pod-after-${attempt}`, ...POD_ENV });
    }
    // The next delivery is past INBOX_MAX_DELIVER: the pod answers with an error, without a run.
    const waited = await post(`/channels/${channel.id}/wait`, { message_id: message.id, timeout_ms: 15_000 });
    expect(waited).toMatchObject({ status: 'replied', reply: { is_error: true } });
    expect(waited.reply.content[0].text).toContain(`after ${MAX_DELIVER} attempts`);
    const last = env.stack.processes.find((p) => p.name.startsWith('agent-pod') && p.running)!;
    expect(last.logs.some((l) => l.msg === 'skill started' && l.message_id === message.id)).toBe(false);
    await expect.poll(async () => (await inbox()).ackPending, { timeout: 10_000 }).toBe(0);
  });

  it('through the gateway with an idempotency key: the give-up error is answered, not kept; a retry runs the call', async () => {
    const key = `retry-${randomUUID()}`;
    const call = () =>
      fetch(env.mcpUrl(), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-agent-api-key': env.apiKey,
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'counter',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'counter',
            arguments: { key, delay_ms: 4_000, idempotency_key: key },
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': {},
              'io.modelcontextprotocol/clientInfo': { name: 'give-up', version: '1' },
              'mcpgw/timeoutMs': 30_000,
            },
          },
        }),
      }).then((r) => r.json() as Promise<{ result: { isError?: boolean; content: { text: string }[] } }>);

    const first = call();
    for (let attempt = 1; attempt <= MAX_DELIVER; attempt++) {
      const pod = env.stack.processes.find((p) => p.name.startsWith('agent-pod') && p.running)!;
      await pod.waitForLog((l) => l.msg === 'skill started' && l.skill === 'counter' && !!l.message_id, 10_000);
      await pod.kill();
      await env.stack.startPod({ POD_ID: `pod-gw-${attempt}`, ...POD_ENV });
    }
    const gaveUp = await first;
    // One assertion on the whole result, so that a failure shows what came back instead.
    expect(gaveUp.result).toMatchObject({
      isError: true,
      content: [{ text: expect.stringContaining(`after ${MAX_DELIVER} attempts`) }],
    });
    // Not replayed: the same key runs the call again, and this time it completes, once.
    const retried = await call();
    expect(retried.result).toMatchObject({ structuredContent: { key, count: 1 } });
    expect(retried.result.isError).toBeFalsy();
  });
});
