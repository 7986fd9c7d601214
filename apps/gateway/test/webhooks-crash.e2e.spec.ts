import { connectMcp, freePort, startTestStack, type TestStack } from '@mcpgw/devstack';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver, eventOf } from './support/webhook-receiver';

const ENV = { WEBHOOK_SECRET_KEY: 'webhooks-crash-secret-key-0123456789abcdef', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' };
const GATEWAY_ENV = { WEBHOOK_RETRY_BASE_MS: '300', WEBHOOK_RETRY_MAX_MS: '600', WEBHOOK_POLL_INTERVAL_MS: '100' };

/** The outbox is durable: a gateway killed between the call and the delivery delivers on restart, once. */
describe('webhooks across a gateway crash', () => {
  let env: TestStack;
  let db: Client;
  let receiver: WebhookReceiver | undefined;

  beforeAll(async () => {
    env = await startTestStack({ env: ENV, gatewayEnv: GATEWAY_ENV });
    db = new Client({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await receiver?.stop();
    await env?.stop();
  });

  it('kill -9 after the call, before the delivery: on restart the event is delivered exactly once', async () => {
    // The receiver is down: the call commits its outbox row, the first attempts find nobody.
    const port = await freePort();
    const hook = await env.stack.admin<{ id: string; secret: string }>(
      'webhook',
      'add',
      '--agent',
      env.agentId,
      '--url',
      `http://127.0.0.1:${port}/hook`,
      '--events',
      'tool_call.completed',
    );
    const mcp = await connectMcp(env.mcpUrl(0), env.apiKey);
    const marker = `crash-${Date.now()}`;
    await mcp.client.callTool({ name: 'echo', arguments: { text: marker } });
    await mcp.close().catch(() => undefined);
    const row = async () =>
      (await db.query(`SELECT id, status, attempts FROM gateway.webhook_deliveries WHERE webhook_id = $1`, [hook.id]))
        .rows;
    await expect.poll(async () => (await row())[0]?.attempts ?? 0, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    expect((await row())[0].status).toBe('pending');

    const gatewayPort = new URL(env.gatewayUrls[0]).port;
    await env.stack.serving(env.gatewayUrls[0]).kill();
    receiver = await new WebhookReceiver().start(port);
    receiver.verify('/hook', { secret: hook.secret });
    // Nobody is left to deliver it.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.received).toHaveLength(0);

    await env.stack.startGateway({ ...GATEWAY_ENV, GATEWAY_PORT: gatewayPort });
    await expect.poll(() => receiver!.received.length, { timeout: 15_000 }).toBe(1);
    await expect.poll(async () => (await row())[0].status, { timeout: 5_000 }).toBe('delivered');
    // Time for a duplicate to show up, were there one.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(receiver.received).toHaveLength(1);
    const [got] = receiver.received;
    expect(got.verifiedWith).toEqual(['secret']);
    expect(got.headers['webhook-id']).toBe((await row())[0].id);
    expect(eventOf(got)).toMatchObject({ type: 'tool_call.completed', data: { result: { text: marker } } });
  });
});
