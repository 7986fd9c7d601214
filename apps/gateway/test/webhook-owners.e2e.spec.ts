import { connectMcp, freePort, startTestStack, type McpConnection, type TestStack } from '@mcpgw/devstack';
import { Client, type Notification } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver, eventOf } from './support/webhook-receiver';

interface Hook {
  id: string;
  owner: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
  failing_since: string | null;
}

const RECEIVER_PORT = await freePort();
/** Nothing listens here: a dead receiver (connection refused). */
const DEAD_PORT = await freePort();
const ENV = {
  WEBHOOK_SECRET_KEY: 'webhook-owners-e2e-secret-key-0123456789abcdef',
  WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${RECEIVER_PORT},127.0.0.1:${DEAD_PORT}`,
};
const GATEWAY_ENV = {
  WEBHOOK_RETRY_BASE_MS: '300',
  WEBHOOK_RETRY_MAX_MS: '600',
  WEBHOOK_POLL_INTERVAL_MS: '100',
  WEBHOOK_MAX_PER_OWNER: '2',
  WEBHOOK_DISABLE_AFTER_SECONDS: '4',
  QUOTA_CALLS_PER_SECOND: '0',
  QUOTA_CONCURRENT_CALLS: '0',
};
const EVENTS = ['tool_call.completed', 'tool_call.failed'];
/** The dispatchers' wake-up channel (apps/gateway/src/database/database.ts). */
const OUTBOX_CHANNEL = 'mcpgw_webhook_outbox';

/**
 * Webhooks belong to their owner: a key's webhook hears only that key's calls
 * and only that key manages it; the operator's (admin CLI) hears every call.
 * A key holds at most WEBHOOK_MAX_PER_OWNER. A dead endpoint costs one probe
 * per backoff step, not an attempt per call, and is disabled, saying why,
 * once it has failed for WEBHOOK_DISABLE_AFTER_SECONDS.
 */
describe('webhooks per owner, and endpoints that fail', () => {
  let env: TestStack;
  let receiver: WebhookReceiver;
  let db: Client;
  let keyB: string;
  const clients: McpConnection[] = [];

  const rest = (key: string, path = '', init: RequestInit = {}) =>
    fetch(`${env.gatewayUrls[0]}/api/v1/agents/${env.agentId}/webhooks${path}`, {
      ...init,
      headers: { 'content-type': 'application/json', 'x-agent-api-key': key },
    });
  const addAs = async (key: string, path: string, port = RECEIVER_PORT) => {
    const response = await rest(key, '', {
      method: 'POST',
      body: JSON.stringify({ url: `http://127.0.0.1:${port}${path}`, events: EVENTS }),
    });
    return { status: response.status, body: (await response.json()) as Hook & { message?: string } };
  };
  const addAsOperator = (path: string, port = RECEIVER_PORT) =>
    env.stack.admin<Hook>(
      'webhook',
      'add',
      '--agent',
      env.agentId,
      '--url',
      `http://127.0.0.1:${port}${path}`,
      '--events',
      EVENTS.join(','),
    );
  const echoAs = async (key: string, text: string) => {
    const mcp = await connectMcp(env.mcpUrl(), key);
    clients.push(mcp);
    await mcp.client.callTool({ name: 'echo', arguments: { text } });
  };
  const texts = (path: string) => receiver.at(path).map((r) => eventOf(r).data.result?.text);
  const hookOf = async (id: string) =>
    (await env.stack.admin<Hook[]>('webhook', 'list', '--agent', env.agentId)).find((h) => h.id === id);

  beforeAll(async () => {
    env = await startTestStack({ env: ENV, gatewayEnv: GATEWAY_ENV });
    receiver = await new WebhookReceiver().start(RECEIVER_PORT);
    keyB = (await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', env.agentId)).key;
    db = new Client({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await db?.end();
    await receiver?.stop();
    await env?.stop();
  });

  it("a key's webhook hears only that key's calls; the operator's hears every call, a grant task's too", async () => {
    const a = await addAs(env.apiKey, '/a');
    const b = await addAs(keyB, '/b');
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.owner).toMatch(/^apikey:/);
    const operator = await addAsOperator('/operator');
    expect(operator.owner).toBeNull();

    await echoAs(env.apiKey, 'from key A');
    await echoAs(keyB, 'from key B');
    const { grant } = await env.stack.admin<{ grant: string }>(
      'grant',
      'mint',
      '--workspace',
      'demo',
      '--agent',
      env.agentId,
      '--task',
      'owners-task',
      '--tools',
      'echo',
    );
    const granted = await fetch(`${env.gatewayUrls[0]}/workspaces/demo/agents/${env.agentId}/mcp/http`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${grant}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'from the grant task' } },
      }),
    });
    expect(granted.status).toBe(200);

    await expect
      .poll(() => texts('/operator').sort(), { timeout: 10_000 })
      .toEqual(['from key A', 'from key B', 'from the grant task']);
    await expect.poll(() => texts('/a'), { timeout: 5_000 }).toEqual(['from key A']);
    await expect.poll(() => texts('/b'), { timeout: 5_000 }).toEqual(['from key B']);
    // Nothing more comes: the others' calls were never fanned out to them.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(texts('/a')).toEqual(['from key A']);
    expect(texts('/b')).toEqual(['from key B']);

    // A key lists only its own, and cannot touch the operator's or another key's.
    const listed = (await (await rest(env.apiKey)).json()) as Hook[];
    expect(listed.map((h) => h.id)).toEqual([a.body.id]);
    for (const foreign of [operator.id, b.body.id]) {
      expect((await rest(env.apiKey, `/${foreign}`, { method: 'DELETE' })).status).toBe(404);
      expect((await rest(env.apiKey, `/${foreign}/rotate-secret`, { method: 'POST' })).status).toBe(404);
      expect((await rest(env.apiKey, `/${foreign}/enable`, { method: 'POST' })).status).toBe(404);
      expect((await rest(env.apiKey, `/${foreign}/deliveries`)).status).toBe(404);
    }
    const operatorDelivery = (
      await env.stack.admin<{ id: string }[]>('webhook', 'deliveries', '--webhook', operator.id)
    )[0];
    expect((await rest(env.apiKey, `/deliveries/${operatorDelivery.id}/redeliver`, { method: 'POST' })).status).toBe(
      404,
    );
    expect(await hookOf(operator.id)).toBeDefined();
    expect(await hookOf(b.body.id)).toBeDefined();

    for (const id of [a.body.id, b.body.id, operator.id]) await env.stack.admin('webhook', 'remove', id);
  });

  it('a key holds at most WEBHOOK_MAX_PER_OWNER webhooks of an agent; another key is not counted against it', async () => {
    const made = [await addAs(env.apiKey, '/cap1'), await addAs(env.apiKey, '/cap2')];
    expect(made.map((m) => m.status)).toEqual([201, 201]);
    const third = await addAs(env.apiKey, '/cap3');
    expect(third.status).toBe(400);
    expect(third.body.message).toMatch(/already holds 2 webhooks .*WEBHOOK_MAX_PER_OWNER/);
    const other = await addAs(keyB, '/cap-b');
    expect(other.status).toBe(201);
    // Concurrent adds cannot both take the last place.
    await env.stack.admin('webhook', 'remove', made[1].body.id);
    const raced = await Promise.all([addAs(env.apiKey, '/race1'), addAs(env.apiKey, '/race2')]);
    expect(raced.map((r) => r.status).sort()).toEqual([201, 400]);
    for (const hook of [made[0], other, ...raced])
      if (hook.status === 201) await env.stack.admin('webhook', 'remove', hook.body.id);
  });

  it('a dead endpoint costs one probe per backoff step, is disabled after the window saying why, and `webhook enable` brings it back', async () => {
    const dead = await addAsOperator('/dead', DEAD_PORT);
    const deliveriesOf = async (id: string) =>
      (await db.query(`SELECT count(*)::int AS n FROM gateway.webhook_deliveries WHERE webhook_id = $1`, [id])).rows[0]
        .n as number;
    const attempts = async () =>
      Number(
        (
          await db.query(
            `SELECT count(*)::int AS n FROM gateway.webhook_attempts a
             JOIN gateway.webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = $1`,
            [dead.id],
          )
        ).rows[0].n,
      );
    // An outcome that only failing webhooks hear wakes no dispatcher: their poll fans it out.
    let notices = 0;
    const onNotice = ({ channel }: Notification) => void (channel === OUTBOX_CHANNEL && notices++);
    db.on('notification', onNotice);
    await db.query(`LISTEN ${OUTBOX_CHANNEL}`);
    for (let i = 0; i < 20; i++) await echoAs(env.apiKey, `to the dead ${i}`);
    await expect
      .poll(async () => (await hookOf(dead.id))?.failing_since, { timeout: 5_000 })
      .toEqual(expect.any(String));
    await expect.poll(() => deliveriesOf(dead.id), { timeout: 5_000 }).toBe(20);
    await db.query(`UNLISTEN ${OUTBOX_CHANNEL}`);
    db.off('notification', onNotice);
    expect(notices).toBe(0);
    // 20 calls, and the endpoint tried about once per step (300-600 ms) since it failed, not 20 times more.
    await expect
      .poll(async () => (await hookOf(dead.id))?.disabled_at, { timeout: 15_000 })
      .toEqual(expect.any(String));
    const disabled = (await hookOf(dead.id))!;
    expect(disabled.disabled_reason).toMatch(/^failing since .*ECONNREFUSED.*disabled after 4 s/);
    const tried = await attempts();
    expect(tried).toBeGreaterThan(1);
    expect(tried).toBeLessThan(20);
    // Its pending deliveries failed with it; nothing is claimed for it any more.
    const { rows } = await db.query(
      `SELECT status, count(*)::int AS n FROM gateway.webhook_deliveries WHERE webhook_id = $1 GROUP BY status`,
      [dead.id],
    );
    expect(rows).toEqual([{ status: 'failed', n: 20 }]);

    // The receiver comes back on that port; the operator enables the webhook: events reach it again.
    const revived = await new WebhookReceiver().start(DEAD_PORT);
    try {
      const enabled = await env.stack.admin<Hook>('webhook', 'enable', dead.id);
      expect(enabled).toMatchObject({ disabled_at: null, failing_since: null });
      await echoAs(env.apiKey, 'back again');
      await expect
        .poll(() => revived.at('/dead').map((r) => eventOf(r).data.result?.text), { timeout: 10_000 })
        .toEqual(['back again']);
    } finally {
      await revived.stop();
      await env.stack.admin('webhook', 'remove', dead.id);
    }
  });
});
