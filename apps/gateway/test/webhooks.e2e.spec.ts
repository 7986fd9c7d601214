import {
  a2aClient,
  connectMcp,
  dataPart,
  freePort,
  scrapeMetric,
  startTestStack,
  type McpConnection,
  type TestStack,
  userMessage,
} from '@mcpgw/devstack';
import { Client } from 'pg';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver, eventOf } from './support/webhook-receiver';

interface Created {
  id: string;
  secret: string;
  events: string[];
  previous_secret_expires_at: string | null;
}
interface Delivery {
  id: string;
  status: string;
  attempts: number;
  event_type: string;
  attempt_log: { outcome: string; response_code: number | null; duration_ms: number; error: string | null }[];
}

/** Both the admin CLI and the gateways: the key that encrypts secrets, and the receivers' address and port allowed. */
const RECEIVER_PORT = await freePort();
const ENV = {
  WEBHOOK_SECRET_KEY: 'webhooks-e2e-secret-key-0123456789abcdef',
  WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${RECEIVER_PORT}`,
};
const GATEWAY_ENV = {
  // The audit trail writes a batched statement of its own for calls (audit/README.md); what is measured
  // here is the webhook outbox's SQL, so the trail is off (audit.e2e and the bench cover it).
  AUDIT: 'off',
  WEBHOOK_RETRY_BASE_MS: '100',
  WEBHOOK_RETRY_MAX_MS: '400',
  WEBHOOK_POLL_INTERVAL_MS: '100',
  WEBHOOK_MAX_ATTEMPTS: '4',
  QUOTA_CALLS_PER_SECOND: '0',
  QUOTA_CONCURRENT_CALLS: '0',
};
const EVENTS = 'tool_call.completed,tool_call.failed';

/** Signed webhooks of tool calls, on two gateways, to real receivers verifying with `standardwebhooks`. */
describe('webhooks', () => {
  let env: TestStack;
  let receiver: WebhookReceiver;
  let mcp: McpConnection;
  let db: Client;
  let unique = 0;
  const fresh = (label: string) => `${label}-${Date.now()}-${unique++}`;
  const registered: string[] = [];

  const addWebhook = async (path: string, events = EVENTS) => {
    const created = await env.stack.admin<Created>(
      'webhook',
      'add',
      '--agent',
      env.agentId,
      '--url',
      receiver.url(path),
      '--events',
      events,
    );
    registered.push(created.id);
    return created;
  };
  const deliveries = (webhookId: string) =>
    env.stack.admin<Delivery[]>('webhook', 'deliveries', '--webhook', webhookId);
  /**
   * The statuses of a webhook's deliveries, newest first, read from the database: what a test
   * polls for, where an admin CLI process per poll would cost a second of CPU each time. What
   * the CLI shows of them is checked once the poll is done.
   */
  const statuses = async (webhookId: string): Promise<string[]> =>
    (
      await db.query(
        'SELECT status FROM gateway.webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at DESC, id',
        [webhookId],
      )
    ).rows.map((row) => row.status as string);
  const disabledAt = async (webhookId: string): Promise<string | null> =>
    (await db.query('SELECT disabled_at FROM gateway.webhooks WHERE id = $1', [webhookId])).rows[0]?.disabled_at ??
    null;
  const echo = (text: string, connection = mcp) => connection.client.callTool({ name: 'echo', arguments: { text } });
  const rest = (path: string, init: RequestInit = {}, key = env.apiKey) =>
    fetch(`${env.gatewayUrls[0]}/api/v1/agents/${env.agentId}/webhooks${path}`, {
      ...init,
      headers: { 'content-type': 'application/json', 'x-agent-api-key': key },
    });

  beforeAll(async () => {
    env = await startTestStack({ gateways: 2, env: ENV, gatewayEnv: GATEWAY_ENV });
    receiver = await new WebhookReceiver().start(RECEIVER_PORT);
    mcp = await connectMcp(env.mcpUrl(0), env.apiKey);
    db = new Client({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
  });

  afterEach(async () => {
    // Each test's webhooks go, so the next test's events reach only its own.
    for (const id of registered.splice(0)) await env.stack.admin('webhook', 'remove', id).catch(() => undefined);
  });

  afterAll(async () => {
    await mcp?.close();
    await db?.end();
    await receiver?.stop();
    await env?.stop();
  });

  it('a call of an agent without webhooks sends no SQL', async () => {
    const statements = () => scrapeMetric(env.stack.managementUrlOf(env.gatewayUrls[0]), 'mcpgw_sql_statements_total');
    await echo('warm up');
    // The fewest statements of three windows of 10 calls: a background job (a cache reload, a
    // purge) may fall into one window, not into all three; a statement per call falls into every one.
    const windows: number[] = [];
    for (let window = 0; window < 3; window++) {
      const before = await statements();
      for (let i = 0; i < 10; i++) await echo(`no webhook ${window}.${i}`);
      windows.push((await statements()) - before);
    }
    expect(Math.min(...windows)).toBe(0);
  });

  it('a receiver verifying with standardwebhooks gets tool_call.completed and tool_call.failed', async () => {
    const hook = await addWebhook('/verify');
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(hook.secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
    const wrong = `whsec_${randomBytes(32).toString('base64')}`;
    receiver.verify('/verify', { registered: hook.secret, wrong });
    const marker = fresh('hello');

    await echo(marker);
    await mcp.client.callTool({ name: 'fail', arguments: { reason: marker } });
    await expect.poll(() => receiver.at('/verify').length, { timeout: 10_000 }).toBe(2);

    const got = receiver.at('/verify');
    for (const request of got) {
      expect(request.verifiedWith).toEqual(['registered']);
      expect(request.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
      expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.body).not.toContain(env.apiKey);
    }
    const byType = Object.fromEntries(got.map((r) => [eventOf(r).type, eventOf(r)]));
    expect(Object.keys(byType).sort()).toEqual(['tool_call.completed', 'tool_call.failed']);
    const completed = byType['tool_call.completed'];
    expect(new Date(completed.timestamp).getTime()).toBeGreaterThan(Date.now() - 30_000);
    expect(completed.data).toMatchObject({
      tool: 'echo',
      agent_id: env.agentId,
      caller_id: expect.stringContaining(env.apiKeyId),
      surface: 'agent',
      result: { text: marker, truncated: false, content_types: ['text'] },
    });
    expect(completed.data.call_id).toMatch(/^call_[0-9a-f]{32}$/);
    expect(completed.data.duration_ms).toEqual(expect.any(Number));
    expect(byType['tool_call.failed'].data).toMatchObject({
      tool: 'fail',
      error: { kind: 'tool_error', text: `fail: ${marker}` },
    });
    const [listed] = await env.stack.admin<{ id: string; url: string; events: string[] }[]>(
      'webhook',
      'list',
      '--agent',
      env.agentId,
    );
    expect(listed).toMatchObject({ id: hook.id, url: receiver.url('/verify'), events: EVENTS.split(',') });
    expect(JSON.stringify(listed)).not.toContain(hook.secret.slice(6));
    const stored = await db.query(`SELECT secret FROM gateway.webhooks WHERE id = $1`, [hook.id]);
    expect(stored.rows[0].secret.includes(Buffer.from(hook.secret))).toBe(false);
    expect(stored.rows[0].secret.includes(Buffer.from(hook.secret.slice(6), 'base64'))).toBe(false);
  });

  it('only the subscribed event types are sent', async () => {
    await addWebhook('/failures-only', 'tool_call.failed');
    const marker = fresh('only');
    await echo(marker);
    await mcp.client.callTool({ name: 'fail', arguments: { reason: marker } });
    await expect.poll(() => receiver.at('/failures-only').length, { timeout: 10_000 }).toBe(1);
    expect(eventOf(receiver.at('/failures-only')[0]).type).toBe('tool_call.failed');
  });

  it('an agent timeout is reported as tool_call.failed; a call refused before the agent is not reported', async () => {
    await addWebhook('/timeout', 'tool_call.failed');
    const timedOut = await mcp.client
      .callTool({ name: 'sleep', arguments: { ms: 2_000 }, _meta: { 'mcpgw/timeoutMs': 300 } })
      .then(
        () => 'answered',
        () => 'timed out',
      );
    expect(timedOut).toBe('timed out');
    await mcp.client.callTool({ name: 'sleep', arguments: { ms: 'not a number' } }).catch(() => undefined);
    await mcp.client.callTool({ name: 'no_such_tool', arguments: {} }).catch(() => undefined);
    await expect.poll(() => receiver.at('/timeout').length, { timeout: 10_000 }).toBe(1);
    expect(eventOf(receiver.at('/timeout')[0]).data).toMatchObject({
      tool: 'sleep',
      error: { kind: 'agent_timeout', message: 'Agent reply timeout' },
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.at('/timeout')).toHaveLength(1);
  });

  it('a keyed call reports once: its retries replay the result and send nothing', async () => {
    const hook = await addWebhook('/keyed', 'tool_call.completed');
    const args = { text: fresh('keyed'), idempotency_key: fresh('idem') };
    await mcp.client.callTool({ name: 'echo', arguments: args });
    const second = await connectMcp(env.mcpUrl(1), env.apiKey);
    try {
      const replay = await second.client.callTool({ name: 'echo', arguments: args });
      expect(replay._meta).toMatchObject({ 'mcpgw/idempotentReplay': true });
    } finally {
      await second.close();
    }
    await expect.poll(() => receiver.at('/keyed').length, { timeout: 10_000 }).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.at('/keyed')).toHaveLength(1);
    expect(eventOf(receiver.at('/keyed')[0]).data.result).toMatchObject({ text: args.text });
    // One outcome row, fanned out to one delivery: nothing left behind for the retries.
    const { rows } = await db.query(
      `SELECT (SELECT count(*)::int FROM gateway.webhook_events) AS events,
              (SELECT count(*)::int FROM gateway.webhook_deliveries WHERE webhook_id = $1) AS deliveries`,
      [hook.id],
    );
    expect(rows).toEqual([{ events: 0, deliveries: 1 }]);
  });

  it('an A2A message reports once: its record keeps the result, written with the outcome row', async () => {
    // A2A's messages have no record (idempotency/README.md), except when an outcome is written with
    // one: the transaction that stores the result is what makes the report happen once.
    await addWebhook('/a2a', 'tool_call.completed');
    const message = userMessage('echo', [dataPart({ text: fresh('a2a') })]);
    const send = async (gateway: number) =>
      (await a2aClient(`${env.gatewayUrls[gateway]}/a2a/${env.agentId}/`, 'HTTP+JSON', env.apiKey)).sendMessage({
        tenant: '',
        message,
        configuration: undefined,
        metadata: undefined,
      });
    const first = await send(0);
    expect(await send(1)).toEqual(first);
    await expect.poll(() => receiver.at('/a2a').length, { timeout: 10_000 }).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.at('/a2a')).toHaveLength(1);
    expect(eventOf(receiver.at('/a2a')[0]).data).toMatchObject({ surface: 'a2a', tool: 'echo' });
    const { rows } = await db.query(
      'SELECT result IS NOT NULL AS stored FROM gateway.idempotency_records WHERE key = $1',
      [message.messageId],
    );
    expect(rows).toEqual([{ stored: true }]);
  });

  it('surface B calls report too, with the grant task as the caller', async () => {
    await addWebhook('/grant', 'tool_call.completed');
    const task = fresh('task');
    const { grant } = await env.stack.admin<{ grant: string }>(
      'grant',
      'mint',
      '--workspace',
      'demo',
      '--agent',
      env.agentId,
      '--task',
      task,
      '--tools',
      'echo',
    );
    const marker = fresh('grant');
    const response = await fetch(`${env.gatewayUrls[1]}/workspaces/demo/agents/${env.agentId}/mcp/http`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${grant}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: marker } },
      }),
    });
    expect(response.status).toBe(200);
    await expect.poll(() => receiver.at('/grant').length, { timeout: 10_000 }).toBe(1);
    const event = eventOf(receiver.at('/grant')[0]);
    expect(event.data).toMatchObject({ surface: 'grant', tool: 'echo', caller_id: expect.stringContaining(task) });
    expect(receiver.at('/grant')[0].body).not.toContain(grant);
  });

  it('REST invoke calls report too: surface rest, the call id of the REST answer', async () => {
    await addWebhook('/invoked', 'tool_call.completed');
    const marker = fresh('rest');
    const response = await fetch(`${env.gatewayUrls[1]}/api/v1/agents/${env.agentId}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-agent-api-key': env.apiKey },
      body: JSON.stringify({ tool: 'echo', arguments: { text: marker } }),
    });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { call_id: string };
    await expect.poll(() => receiver.at('/invoked').length, { timeout: 10_000 }).toBe(1);
    expect(eventOf(receiver.at('/invoked')[0]).data).toMatchObject({
      surface: 'rest',
      tool: 'echo',
      call_id: answer.call_id,
      caller_id: expect.stringContaining(env.apiKeyId),
      result: { text: marker },
    });
  });

  it('a receiver that fails twice then succeeds is retried, and every attempt is recorded', async () => {
    receiver.on('/flaky', (n) => (n < 2 ? 503 : 200));
    const hook = await addWebhook('/flaky', 'tool_call.completed');
    await echo(fresh('flaky'));
    await expect.poll(() => receiver.at('/flaky').length, { timeout: 10_000 }).toBe(3);
    const ids = new Set(receiver.at('/flaky').map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    await expect.poll(async () => (await statuses(hook.id))[0], { timeout: 5_000 }).toBe('delivered');
    const [delivery] = await deliveries(hook.id);
    expect(delivery).toMatchObject({ id: [...ids][0], event_type: 'tool_call.completed', attempts: 3 });
    expect(delivery.attempt_log.map((a) => [a.outcome, a.response_code])).toEqual([
      ['retry', 503],
      ['retry', 503],
      ['delivered', 200],
    ]);
    for (const attempt of delivery.attempt_log) expect(attempt.duration_ms).toEqual(expect.any(Number));
  });

  it('429 is retried; a delivery that keeps failing is marked failed after WEBHOOK_MAX_ATTEMPTS', async () => {
    receiver.on('/down', () => 429);
    const hook = await addWebhook('/down', 'tool_call.completed');
    await echo(fresh('down'));
    await expect.poll(async () => (await statuses(hook.id))[0], { timeout: 10_000 }).toBe('failed');
    const [delivery] = await deliveries(hook.id);
    expect(delivery.attempts).toBe(4);
    expect(delivery.attempt_log.map((a) => a.response_code)).toEqual([429, 429, 429, 429]);
    expect(receiver.at('/down')).toHaveLength(4);

    // Sent again, same webhook-id, once it answers.
    receiver.on('/down', () => 200);
    await env.stack.admin('webhook', 'redeliver', delivery.id);
    await expect.poll(async () => (await statuses(hook.id))[0], { timeout: 10_000 }).toBe('delivered');
    expect(receiver.at('/down').at(-1)!.headers['webhook-id']).toBe(delivery.id);
  });

  it('410 Gone disables the endpoint: nothing more is sent to it', async () => {
    receiver.on('/gone', () => 410);
    const hook = await addWebhook('/gone', 'tool_call.completed');
    await echo(fresh('gone'));
    await expect.poll(() => disabledAt(hook.id), { timeout: 10_000 }).not.toBeNull();
    const listed = await env.stack.admin<{ id: string; disabled_at: string | null }[]>('webhook', 'list');
    expect(listed.find((h) => h.id === hook.id)?.disabled_at).toEqual(expect.any(String));
    const [delivery] = await deliveries(hook.id);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1 });
    expect(delivery.attempt_log[0]).toMatchObject({ outcome: 'gone', response_code: 410 });

    await echo(fresh('after gone'));
    // Time for a fan-out and an attempt, were the disabled webhook still heard.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await deliveries(hook.id)).toHaveLength(1);
    expect(receiver.at('/gone')).toHaveLength(1);
  });

  it('a webhook disabled by 410 is enabled again (REST, CLI): events reach it again, same id and secret', async () => {
    receiver.on('/revived', (n) => (n === 0 ? 410 : 200));
    // The key's own webhook (REST): the key manages it, the operator (CLI) too.
    const created = await rest('', {
      method: 'POST',
      body: JSON.stringify({ url: receiver.url('/revived'), events: ['tool_call.completed'] }),
    });
    const hook = (await created.json()) as Created;
    registered.push(hook.id);
    receiver.verify('/revived', { secret: hook.secret });
    const listed = async () =>
      (await rest(''))
        .json()
        .then((hooks: { id: string; disabled_at: string | null }[]) => hooks.find((h) => h.id === hook.id));
    await echo(fresh('revived gone'));
    await expect.poll(async () => (await listed())?.disabled_at, { timeout: 20_000 }).toEqual(expect.any(String));

    const enabled = await rest(`/${hook.id}/enable`, { method: 'POST' });
    expect(enabled.status).toBe(200);
    expect(await enabled.json()).toMatchObject({ id: hook.id, disabled_at: null, disabled_reason: null });
    expect((await rest('/wh_unknown/enable', { method: 'POST' })).status).toBe(404);
    // Enabling an active webhook changes nothing.
    expect(await env.stack.admin('webhook', 'enable', hook.id)).toMatchObject({ id: hook.id, disabled_at: null });

    await echo(fresh('revived back'));
    await expect.poll(() => receiver.at('/revived').length, { timeout: 10_000 }).toBe(2);
    expect(receiver.at('/revived')[1]).toMatchObject({ status: 200, verifiedWith: ['secret'] });
    // The delivery the 410 failed stays failed; the new one is delivered.
    // (The attempt is recorded just after the receiver answered it.)
    await expect
      .poll(async () => (await statuses(hook.id)).sort(), { timeout: 5_000 })
      .toEqual(['delivered', 'failed']);
    expect((await deliveries(hook.id)).map((d) => d.status).sort()).toEqual(['delivered', 'failed']);
  });

  it('rotate-secret: during the window both signatures are sent, and each secret verifies', async () => {
    const hook = await addWebhook('/rotate', 'tool_call.completed');
    const rotated = await env.stack.admin<Created>('webhook', 'rotate-secret', hook.id);
    expect(rotated.secret).not.toBe(hook.secret);
    expect(new Date(rotated.previous_secret_expires_at!).getTime()).toBeGreaterThan(Date.now());
    receiver.verify('/rotate', { old: hook.secret, new: rotated.secret });
    await echo(fresh('rotate'));
    await expect.poll(() => receiver.at('/rotate').length, { timeout: 10_000 }).toBe(1);
    const [request] = receiver.at('/rotate');
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(request.verifiedWith.sort()).toEqual(['new', 'old']);
  });

  it('REST: the agent key registers, lists, rotates and removes its own webhooks', async () => {
    const created = await rest('', {
      method: 'POST',
      body: JSON.stringify({ url: receiver.url('/rest'), events: ['tool_call.completed'] }),
    });
    expect(created.status).toBe(201);
    const hook = (await created.json()) as Created;
    registered.push(hook.id);
    expect(hook).toMatchObject({ events: ['tool_call.completed'], secret: expect.stringMatching(/^whsec_/) });
    receiver.verify('/rest', { secret: hook.secret });
    await echo(fresh('rest'));
    await expect.poll(() => receiver.at('/rest').length, { timeout: 10_000 }).toBe(1);
    expect(receiver.at('/rest')[0].verifiedWith).toEqual(['secret']);

    expect(((await (await rest('')).json()) as { id: string }[]).map((h) => h.id)).toContain(hook.id);
    // The receiver can have the delivery a moment before its attempt is recorded (attempts are group-written).
    let deliveriesSeen: Delivery[] = [];
    await expect
      .poll(
        async () => {
          deliveriesSeen = (await (await rest(`/${hook.id}/deliveries`)).json()) as Delivery[];
          return deliveriesSeen[0]?.status;
        },
        { timeout: 10_000 },
      )
      .toBe('delivered');
    expect(deliveriesSeen[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    const redelivered = await rest(`/deliveries/${deliveriesSeen[0].id}/redeliver`, { method: 'POST' });
    expect(redelivered.status).toBe(200);
    await expect.poll(() => receiver.at('/rest').length, { timeout: 10_000 }).toBe(2);
    expect(receiver.at('/rest')[1].headers['webhook-id']).toBe(deliveriesSeen[0].id);
    expect((await rest(`/${hook.id}/rotate-secret`, { method: 'POST' })).status).toBe(200);

    // Another agent's key manages that agent's webhooks only: this one does not exist for it.
    await env.stack.admin('agent', 'create', '--id', 'webhooks-other', '--workspace', 'other-ws');
    const other = await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', 'webhooks-other');
    const asOther = (path: string, init: RequestInit = {}) =>
      fetch(`${env.gatewayUrls[0]}/api/v1/agents/webhooks-other/webhooks${path}`, {
        ...init,
        headers: { 'content-type': 'application/json', 'x-agent-api-key': other.key },
      });
    expect(await (await asOther('')).json()).toEqual([]);
    expect((await asOther(`/${hook.id}/deliveries`)).status).toBe(404);
    expect((await asOther(`/${hook.id}/rotate-secret`, { method: 'POST' })).status).toBe(404);
    expect((await asOther(`/deliveries/${deliveriesSeen[0].id}/redeliver`, { method: 'POST' })).status).toBe(404);
    expect((await asOther(`/${hook.id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await rest('', {}, 'bak_wrong')).status).toBe(401);
    expect(
      (await rest('', { method: 'POST', body: JSON.stringify({ url: receiver.url('/x'), events: ['nope'] }) })).status,
    ).toBe(400);
    expect((await rest('', { method: 'POST', body: '{' })).status).toBe(400);
    // A NUL in an id is refused before PostgreSQL (which cannot hold one in text) sees it: 400, not 500.
    for (const [path, method] of [
      ['/%00', 'DELETE'],
      ['/a%00b/deliveries', 'GET'],
      ['/%00/enable', 'POST'],
      ['/deliveries/%00/redeliver', 'POST'],
    ] as const) {
      const refused = await rest(path, { method });
      expect({ path, status: refused.status }).toEqual({ path, status: 400 });
    }
    expect((await rest(`/${hook.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await rest(`/${hook.id}`, { method: 'DELETE' })).status).toBe(404);
  });

  it('SSRF: private, loopback and link-local URLs are refused unless WEBHOOK_ALLOWED_HOSTS names them', async () => {
    for (const url of [
      'http://10.0.0.1/hook',
      'http://169.254.169.254/latest',
      'http://[::1]:8080/',
      'http://192.168.1.1/',
    ]) {
      const response = await rest('', {
        method: 'POST',
        body: JSON.stringify({ url, events: ['tool_call.completed'] }),
      });
      expect(response.status, url).toBe(400);
      expect(((await response.json()) as { message: string }).message).toMatch(/private, loopback or link-local/);
    }
    await expect(
      env.stack.admin('webhook', 'add', '--agent', env.agentId, '--url', 'http://10.1.2.3/', '--events', EVENTS),
    ).rejects.toThrow(/private, loopback or link-local/);

    // Checked again at delivery: a registration whose address became private is refused, not sent.
    const hook = await addWebhook('/rebound', 'tool_call.completed');
    // (Written behind the gateway's back, with the notice every write path sends, so that the replicas'
    // index, which direct sends take the URL from, follows as it would a real change.)
    await db.query(`UPDATE gateway.webhooks SET url = 'http://10.255.255.1:9/' WHERE id = $1`, [hook.id]);
    await db.query(`SELECT pg_notify('mcpgw_gateway_cache', 'webhook:' || $1)`, [env.agentId]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await echo(fresh('rebound'));
    await expect.poll(async () => (await statuses(hook.id))[0], { timeout: 10_000 }).toBe('failed');
    const [delivery] = await deliveries(hook.id);
    expect(delivery.attempt_log[0]).toMatchObject({ outcome: 'refused', response_code: null });
    expect(delivery.attempt_log[0].error).toMatch(/private, loopback or link-local/);
  });

  it('two gateways deliver a burst of 200 events, each exactly once', async () => {
    const hook = await addWebhook('/burst', 'tool_call.completed');
    const second = await connectMcp(env.mcpUrl(1), env.apiKey);
    const prefix = fresh('burst');
    try {
      const calls = Array.from({ length: 200 }, (_, i) => i);
      for (let i = 0; i < calls.length; i += 20) {
        await Promise.all(calls.slice(i, i + 20).map((n) => echo(`${prefix}-${n}`, n % 2 ? second : mcp)));
      }
    } finally {
      await second.close();
    }
    await expect.poll(() => receiver.at('/burst').length, { timeout: 30_000 }).toBeGreaterThanOrEqual(200);
    // Let any duplicate arrive before counting.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const got = receiver.at('/burst');
    expect(got).toHaveLength(200);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(200);
    expect(new Set(got.map((r) => (eventOf(r).data.result as { text: string }).text)).size).toBe(200);
    const replicas = await db.query(
      `SELECT replica, count(*)::int AS n FROM gateway.webhook_attempts a
       JOIN gateway.webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = $1 GROUP BY replica`,
      [hook.id],
    );
    expect(replicas.rows.reduce((sum, row) => sum + row.n, 0)).toBe(200);
    // Both replicas took part (each claims what it is woken for, not what its own calls wrote).
    expect(replicas.rows).toHaveLength(2);
  });
});
