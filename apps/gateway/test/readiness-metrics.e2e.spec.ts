import { parsePrometheus, startTestStack, type Sample, type TestStack } from '@mcpgw/devstack';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * What an operator reads on the management port (libs/observability/README.md):
 * `/ready` names what is not ready (migrations behind the code, a database that
 * refuses connections, …) in its own words and never with a driver's error text;
 * `/metrics` has the per-hop latencies of a call, the inbox consumer's JetStream
 * counts and redeliveries, NATS connection events and idempotency replays.
 */

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('readiness and operations metrics', () => {
  let env: TestStack;
  let db: Client;
  let admin: Client;
  let database: string;

  const managementOf = (name: string) => env.stack.processes.find((p) => p.name === name)!.managementUrl!;
  const ready = async (name: string) => {
    const response = await fetch(`${managementOf(name)}/ready`);
    return { status: response.status, text: await response.text() };
  };
  const samples = async (name: string): Promise<Sample[]> =>
    parsePrometheus(await (await fetch(`${managementOf(name)}/metrics`)).text());
  const value = (all: Sample[], metric: string, labels: Record<string, string> = {}) =>
    all
      .filter((s) => s.name === metric && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((sum, s) => sum + s.value, 0);
  const call = (args: Record<string, unknown>, tool = 'echo') =>
    fetch(env.mcpUrl(), {
      method: 'POST',
      headers: { ...HEADERS, 'x-agent-api-key': env.apiKey },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } }),
    });

  beforeAll(async () => {
    // One message at a time per pod: a second call waits in the stream (pending).
    env = await startTestStack({ podEnv: { POD_CONCURRENCY: '1' } });
    db = new Client({ connectionString: env.stack.settings.databaseUrl });
    // Terminated with the apps' connections below: not an error of the test.
    db.on('error', () => undefined);
    await db.connect();
    database = new URL(env.stack.settings.databaseUrl).pathname.slice(1);
    const adminUrl = new URL(env.stack.settings.databaseUrl);
    adminUrl.pathname = '/postgres';
    admin = new Client({ connectionString: adminUrl.toString() });
    await admin.connect();
  });

  afterAll(async () => {
    await admin?.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`).catch(() => undefined);
    await db?.end();
    await admin?.end();
    await env?.stop();
  });

  it('every app is ready, naming each check, its consumers among them', async () => {
    const gateway = JSON.parse((await ready('gateway-1')).text);
    expect(gateway).toEqual({
      status: 'ready',
      checks: { database: 'ok', migrations: 'ok', nats: 'ok', consumers: 'ok' },
    });
    expect(JSON.parse((await ready('message-service-1')).text).checks).toEqual({
      database: 'ok',
      migrations: 'ok',
      nats: 'ok',
      // The inbox stream takes writes (nats-cluster.e2e: not while its cluster has no quorum).
      jetstream: 'ok',
      consumers: 'ok',
    });
    expect(JSON.parse((await ready('agent-pod-1')).text).checks).toEqual({
      nats: 'ok',
      registration: 'ok',
      inbox: 'ok',
    });
  });

  it('a database without the latest migration is not ready, naming "migrations"', async () => {
    const { rows } = await db.query<{ id: number; timestamp: string; name: string }>(
      'SELECT id, timestamp, name FROM messaging.migrations ORDER BY timestamp DESC LIMIT 1',
    );
    const latest = rows[0];
    await db.query('DELETE FROM messaging.migrations WHERE id = $1', [latest.id]);
    try {
      const answer = await ready('message-service-1');
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.text)).toEqual({
        status: 'not_ready',
        checks: {
          database: 'ok',
          migrations: `not applied: ${latest.name}`,
          nats: 'ok',
          jetstream: 'ok',
          consumers: 'ok',
        },
      });
      // The gateway's own schema is complete: it stays ready.
      expect((await ready('gateway-1')).status).toBe(200);
    } finally {
      await db.query('INSERT INTO messaging.migrations (id, timestamp, name) VALUES ($1, $2, $3)', [
        latest.id,
        latest.timestamp,
        latest.name,
      ]);
    }
    expect((await ready('message-service-1')).status).toBe(200);
  });

  it("a database that refuses connections is not ready, and its driver's error text is not shown", async () => {
    await admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS false`);
    await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    );
    try {
      let answer = await ready('gateway-1');
      for (let i = 0; i < 20 && answer.status === 200; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        answer = await ready('gateway-1');
      }
      expect(answer.status).toBe(503);
      const body = JSON.parse(answer.text);
      expect(body.checks.database).toBe('unavailable');
      expect(body.checks.nats).toBe('ok');
      // What PostgreSQL said ("database … is not currently accepting connections", or the
      // terminated connection's message) is in the log, not on /ready.
      for (const leak of ['accepting', 'terminat', database, '127.0.0.1', '5432', 'postgres'])
        expect(answer.text).not.toContain(leak);
      const gateway = env.stack.processes.find((p) => p.name === 'gateway-1')!;
      await gateway.waitForLog(
        (l) => l.msg === 'not ready' && l.check === 'database' && typeof l.error === 'string',
        5_000,
      );
    } finally {
      await admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`);
    }
    await expect.poll(async () => (await ready('gateway-1')).status, { timeout: 10_000, interval: 250 }).toBe(200);
  });

  it('/metrics: each hop of a call, the inbox consumer, NATS connection events and idempotency replays', async () => {
    const before = {
      gateway: await samples('gateway-1'),
      ms: await samples('message-service-1'),
      pod: await samples('agent-pod-1'),
    };
    const key = `ops-${Date.now()}`;
    expect((await call({ text: 'once', idempotency_key: key })).status).toBe(200);
    expect((await call({ text: 'once', idempotency_key: key })).status).toBe(200);
    const after = {
      gateway: await samples('gateway-1'),
      ms: await samples('message-service-1'),
      pod: await samples('agent-pod-1'),
    };
    const moved = (app: keyof typeof after, metric: string, labels: Record<string, string> = {}) =>
      value(after[app], metric, labels) - value(before[app], metric, labels);

    // One run of the skill: one pass through each hop, each timed on its own process.
    expect(moved('gateway', 'mcpgw_hop_duration_seconds_count', { hop: 'gateway' })).toBe(1);
    expect(moved('ms', 'mcpgw_hop_duration_seconds_count', { hop: 'message_service' })).toBe(1);
    expect(moved('pod', 'mcpgw_hop_duration_seconds_count', { hop: 'pod' })).toBe(1);
    // Nested hops: the gateway's wait holds the message service's, which holds the pod's.
    const sum = (app: keyof typeof after, hop: string) => moved(app, 'mcpgw_hop_duration_seconds_sum', { hop });
    expect(sum('gateway', 'gateway')).toBeGreaterThanOrEqual(sum('ms', 'message_service'));
    expect(sum('ms', 'message_service')).toBeGreaterThanOrEqual(sum('pod', 'pod'));
    expect(sum('pod', 'pod')).toBeGreaterThan(0);
    // The second call was a replay.
    expect(moved('gateway', 'mcpgw_idempotency_replays_total', { surface: 'agent' })).toBe(1);
    // The inbox consumer as JetStream counts it: everything delivered and acked.
    for (const state of ['pending', 'ack_pending', 'redelivered']) {
      expect(
        after.pod.find((s) => s.name === 'mcpgw_inbox_consumer_messages' && s.labels.state === state),
      ).toMatchObject({
        labels: { agent: env.agentId },
        value: 0,
      });
    }
    expect(after.pod.find((s) => s.name === 'mcpgw_inbox_redeliveries_total')).toMatchObject({ value: 0 });
    // Connection events of every app, none so far.
    for (const app of ['gateway', 'ms', 'pod'] as const) {
      for (const event of ['disconnect', 'reconnect'])
        expect(
          after[app].find((s) => s.name === 'mcpgw_nats_connection_events_total' && s.labels.event === event),
        ).toMatchObject({ value: 0 });
    }
  });

  it("/metrics: the inbox consumer's counts move while calls wait for the one slot of the pod", async () => {
    const state = async (name: string) =>
      (await samples('agent-pod-1')).find((s) => s.name === 'mcpgw_inbox_consumer_messages' && s.labels.state === name)
        ?.value;
    const calls = [call({ ms: 6_000 }, 'sleep'), call({ ms: 6_000 }, 'sleep')];
    // Consumer info is asked at most every 5 s: poll until the counts show both calls.
    await expect
      .poll(async () => ({ pending: await state('pending'), ack_pending: await state('ack_pending') }), {
        timeout: 6_000,
        interval: 500,
      })
      .toEqual({ pending: 1, ack_pending: 1 });
    for (const answer of await Promise.all(calls)) expect(answer.status).toBe(200);
    await expect
      .poll(async () => ({ pending: await state('pending'), ack_pending: await state('ack_pending') }), {
        timeout: 7_000,
        interval: 500,
      })
      .toEqual({ pending: 0, ack_pending: 0 });
  }, 90_000);
});
