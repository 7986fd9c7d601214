import {
  agentInboxState,
  connectMcp,
  scrapeMetric,
  startTestStack,
  type McpConnection,
  type TestStack,
} from '@mcpgw/devstack';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { NatsConnection } from 'nats';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

type Counted = { key: string; count: number };
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** `arguments.idempotency_key` under retries, races, restarts, replicas and expiry. */
describe('idempotency keys', () => {
  let env: TestStack;
  let db: Client;
  let nc: NatsConnection;
  /** Stream sequence of the last message JetStream handed to a pod of the agent. */
  const delivered = async () => (await agentInboxState(nc, env.stack.settings.busPrefix, env.agentId)).delivered;
  let shortTtlUrl: string;
  let unique = 0;
  const fresh = (label: string) => `${label}-${Date.now()}-${unique++}`;

  /** The raw HTTP exchange, to see the bytes and headers a client gets. */
  const rawCall = async (url: string, args: Record<string, unknown>, key = env.apiKey) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...HEADERS, 'x-agent-api-key': key },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'counter', arguments: args },
      }),
    });
    return { text: await response.text(), replayed: response.headers.get('idempotent-replayed') };
  };
  const resultText = (body: string) => {
    const result = JSON.parse(body).result;
    delete result._meta;
    return JSON.stringify(result);
  };
  const count = (result: { structuredContent?: unknown }) => (result.structuredContent as Counted).count;
  /** How many times the agent really ran `counter` for this key: one more plain call tells. */
  const executions = async (mcp: McpConnection, counterKey: string) =>
    count(await mcp.client.callTool({ name: 'counter', arguments: { key: counterKey } })) - 1;

  beforeAll(async () => {
    env = await startTestStack({ gateways: 2 });
    shortTtlUrl = `${
      (await env.stack.startGateway({ IDEMPOTENCY_TTL_SECONDS: '1', IDEMPOTENCY_PURGE_INTERVAL_MS: '200' })).url
    }/${env.agentId}/mcp`;
    db = new Client({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
    nc = await env.connectNats();
  });

  afterAll(async () => {
    await nc?.close();
    await db?.end();
    await env?.stop();
  });

  it('a sequential retry gets the stored result byte for byte, marked as a replay, and runs once', async () => {
    const counterKey = fresh('seq');
    const args = { key: counterKey, idempotency_key: fresh('idem') };
    const first = await rawCall(env.mcpUrl(0), args);
    const retry = await rawCall(env.mcpUrl(0), args);
    expect(first.replayed).toBeNull();
    expect(retry.replayed).toBe('true');
    // The same call, by the same id (issue 28), marked as a replay.
    const callId = JSON.parse(first.text).result._meta['mcpgw/callId'];
    expect(callId).toMatch(/^call_[0-9a-f]{32}$/);
    expect(JSON.parse(retry.text).result._meta).toEqual({ 'mcpgw/callId': callId, 'mcpgw/idempotentReplay': true });
    expect(resultText(retry.text)).toBe(resultText(first.text));
    expect(JSON.parse(first.text).result.structuredContent.count).toBe(1);

    const mcp = await connectMcp(env.mcpUrl(0), env.apiKey);
    expect(await executions(mcp, counterKey)).toBe(1);
    await mcp.close();
  });

  it('a tool error is stored and replayed like a success', async () => {
    const mcp = await connectMcp(env.mcpUrl(0), env.apiKey);
    const args = { reason: 'once', idempotency_key: fresh('fail') };
    const first = await mcp.client.callTool({ name: 'fail', arguments: args });
    const retry = await mcp.client.callTool({ name: 'fail', arguments: args });
    expect(first.isError).toBe(true);
    expect(retry.content).toEqual(first.content);
    expect(retry._meta).toEqual({ 'mcpgw/callId': first._meta?.['mcpgw/callId'], 'mcpgw/idempotentReplay': true });
    await mcp.close();
  });

  it('the same key with other arguments, or another tool, is an error and runs nothing', async () => {
    const mcp = await connectMcp(env.mcpUrl(0), env.apiKey);
    const counterKey = fresh('mismatch');
    const key = fresh('idem');
    await mcp.client.callTool({ name: 'counter', arguments: { key: counterKey, idempotency_key: key } });
    for (const [name, args] of [
      ['counter', { key: `${counterKey}-other`, idempotency_key: key }],
      ['echo', { text: 'x', idempotency_key: key }],
    ] as const) {
      const error = await mcp.client.callTool({ name, arguments: args }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(-32602);
      expect((error as McpError).message).toContain('already used with a different tool or arguments');
    }
    expect(await executions(mcp, `${counterKey}-other`)).toBe(0);
    await mcp.close();
  });

  it.each([[''], ['x'.repeat(256)], ['line\nbreak'], [42]])('refuses the malformed key %j with -32602', async (key) => {
    const mcp = await connectMcp(env.mcpUrl(0), env.apiKey);
    const error = await mcp.client
      .callTool({ name: 'counter', arguments: { idempotency_key: key } })
      .catch((e: unknown) => e);
    expect((error as McpError).code).toBe(-32602);
    await mcp.close();
  });

  it('50 concurrent calls with one key over two gateways run once, and all get the same result', async () => {
    const counterKey = fresh('race');
    const args = { key: counterKey, delay_ms: 300, idempotency_key: fresh('idem') };
    const clients = await Promise.all([connectMcp(env.mcpUrl(0), env.apiKey), connectMcp(env.mcpUrl(1), env.apiKey)]);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => clients[i % 2].client.callTool({ name: 'counter', arguments: args })),
    );
    const contents = new Set(results.map((r) => JSON.stringify(r.content)));
    expect(contents.size).toBe(1);
    expect(results.every((r) => count(r) === 1)).toBe(true);
    expect(results.filter((r) => r._meta === undefined).length).toBeLessThanOrEqual(1);
    expect(await executions(clients[0], counterKey)).toBe(1);
    await Promise.all(clients.map((c) => c.close()));
  });

  it('a gateway restart between the call and its retry still replays the stored result', async () => {
    const counterKey = fresh('restart');
    const args = { key: counterKey, idempotency_key: fresh('idem') };
    const first = await rawCall(env.mcpUrl(0), args);

    await env.stack.serving(env.gatewayUrls[0]).stop();
    await env.stack.startGateway({ GATEWAY_PORT: new URL(env.gatewayUrls[0]).port });

    const retry = await rawCall(env.mcpUrl(0), args);
    expect(retry.replayed).toBe('true');
    expect(resultText(retry.text)).toBe(resultText(first.text));
    const mcp = await connectMcp(env.mcpUrl(1), env.apiKey);
    expect(await executions(mcp, counterKey)).toBe(1);
    await mcp.close();
  });

  it('after the TTL the key is forgotten: the call runs again, and expired records are purged', async () => {
    const counterKey = fresh('ttl');
    const args = { key: counterKey, idempotency_key: fresh('idem') };
    const first = JSON.parse((await rawCall(shortTtlUrl, args)).text).result;
    const purged = async () =>
      (await db.query(`SELECT 1 FROM gateway.idempotency_records WHERE key = $1`, [args.idempotency_key])).rowCount ===
      0;
    await expect.poll(purged, { timeout: 5_000, interval: 100 }).toBe(true);
    const again = await rawCall(shortTtlUrl, args);
    expect(again.replayed).toBeNull();
    expect(first.structuredContent.count).toBe(1);
    expect(JSON.parse(again.text).result.structuredContent.count).toBe(2);
  });

  it('a retry whose record was lost within the TTL joins the first call: the message service holds the key', async () => {
    const counterKey = fresh('lost');
    const args = { key: counterKey, idempotency_key: fresh('idem') };
    const first = JSON.parse((await rawCall(env.mcpUrl(0), args)).text).result;
    const { rowCount } = await db.query(`DELETE FROM gateway.idempotency_records WHERE key = $1`, [
      args.idempotency_key,
    ]);
    expect(rowCount).toBe(1);
    const again = await rawCall(env.mcpUrl(1), args);
    expect(again.replayed).toBe('true');
    expect(first.structuredContent.count).toBe(1);
    expect(JSON.parse(again.text).result.structuredContent.count).toBe(1);
    // And other arguments under the key are still refused, by the message service this time.
    await db.query(`DELETE FROM gateway.idempotency_records WHERE key = $1`, [args.idempotency_key]);
    const reused = JSON.parse((await rawCall(env.mcpUrl(1), { ...args, key: 'other' })).text);
    expect(reused.error).toMatchObject({ code: -32602, data: { reason: 'idempotency_key_reused' } });
  });

  it('an expired record is taken over: its posting lets go of the key, and the call runs again', async () => {
    const counterKey = fresh('taken-over');
    const args = { key: counterKey, idempotency_key: fresh('idem') };
    const first = JSON.parse((await rawCall(env.mcpUrl(0), args)).text).result;
    // Expired, not yet purged (the purge runs every minute here): the next claim takes the record over.
    await db.query(`UPDATE gateway.idempotency_records SET expires_at = now() - interval '1 second' WHERE key = $1`, [
      args.idempotency_key,
    ]);
    const again = await rawCall(env.mcpUrl(0), args);
    expect(again.replayed).toBeNull();
    expect(first.structuredContent.count).toBe(1);
    expect(JSON.parse(again.text).result.structuredContent.count).toBe(2);
  });

  it("two API keys' idempotency keys never collide", async () => {
    const other = await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', env.agentId);
    const counterKey = fresh('scope');
    const args = { key: counterKey, idempotency_key: 'shared-key' };
    const mine = JSON.parse((await rawCall(env.mcpUrl(0), args)).text).result;
    const theirs = await rawCall(env.mcpUrl(0), args, other.key);
    expect(theirs.replayed).toBeNull();
    expect(mine.structuredContent.count).toBe(1);
    expect(JSON.parse(theirs.text).result.structuredContent.count).toBe(2);
  });

  it('a retry after the first call timed out gets the late reply, without a second run', async () => {
    const mcp = await connectMcp(env.mcpUrl(1), env.apiKey);
    const counterKey = fresh('late');
    const args = { key: counterKey, delay_ms: 800, idempotency_key: fresh('idem') };
    const timedOut = await mcp.client
      .callTool({ name: 'counter', arguments: args, _meta: { 'mcpgw/timeoutMs': 200 } })
      .catch((e: unknown) => e);
    expect((timedOut as McpError).code).toBe(-32003);

    const retry = await mcp.client.callTool({ name: 'counter', arguments: args });
    expect(count(retry)).toBe(1);
    expect(retry._meta).toEqual({
      'mcpgw/callId': expect.stringMatching(/^call_[0-9a-f]{32}$/),
      'mcpgw/idempotentReplay': true,
    });
    expect(await executions(mcp, counterKey)).toBe(1);
    await mcp.close();
  });

  it('a duplicate that gives up does not cancel the first call', async () => {
    const [first, second] = await Promise.all([
      connectMcp(env.mcpUrl(0), env.apiKey),
      connectMcp(env.mcpUrl(1), env.apiKey),
    ]);
    const counterKey = fresh('patient');
    const args = { key: counterKey, delay_ms: 1_000, idempotency_key: fresh('idem') };
    const original = first.client.callTool({ name: 'counter', arguments: args });
    await expect
      .poll(
        async () =>
          (await db.query(`SELECT 1 FROM gateway.idempotency_records WHERE key = $1`, [args.idempotency_key])).rowCount,
      )
      .toBe(1);
    const impatient = new AbortController();
    const duplicate = second.client
      .callTool({ name: 'counter', arguments: args }, undefined, { signal: impatient.signal })
      .catch((e: Error) => e);
    // Give up only once the duplicate has joined the first call's message and waits on it.
    await expect
      .poll(() => scrapeMetric(env.stack.managementUrlOf(env.gatewayUrls[1]), 'mcpgw_idempotent_joins_waiting'))
      .toBe(1);
    impatient.abort();
    expect(await duplicate).toBeInstanceOf(Error);
    expect(count(await original)).toBe(1);
    expect(await executions(first, counterKey)).toBe(1);
    await Promise.all([first.close(), second.close()]);
  });

  it('when the first caller cancels, the key is freed: a retry runs the call again at once', async () => {
    const mcp = await connectMcp(env.mcpUrl(1), env.apiKey);
    const counterKey = fresh('cancelled');
    const args = { key: counterKey, delay_ms: 3_000, idempotency_key: fresh('idem') };
    const controller = new AbortController();
    const before = await delivered();
    const cancelled = mcp.client
      .callTool({ name: 'counter', arguments: args }, undefined, { signal: controller.signal })
      .catch((e: Error) => e);
    await expect
      .poll(
        async () =>
          (await db.query(`SELECT 1 FROM gateway.idempotency_records WHERE key = $1`, [args.idempotency_key])).rowCount,
      )
      .toBe(1);
    // Cancel once the pod has the message (it counts before it sleeps), not merely once the key is claimed.
    await expect.poll(delivered).toBeGreaterThan(before);
    controller.abort();
    expect(await cancelled).toBeInstanceOf(Error);
    await expect
      .poll(
        async () =>
          (await db.query(`SELECT 1 FROM gateway.idempotency_records WHERE key = $1`, [args.idempotency_key])).rowCount,
      )
      .toBe(0);
    const started = Date.now();
    const retry = await mcp.client.callTool({ name: 'counter', arguments: { ...args, delay_ms: 0 } });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(count(retry)).toBe(2);
    await mcp.close();
  });

  it('a record left in flight by a killed gateway is joined by the retry: one run, its result', async () => {
    const counterKey = fresh('orphan');
    const args = { key: counterKey, delay_ms: 1_500, idempotency_key: fresh('idem') };
    const doomed = rawCall(env.mcpUrl(0), args).catch(() => 'connection lost');
    await expect
      .poll(
        async () =>
          (await db.query(`SELECT result FROM gateway.idempotency_records WHERE key = $1`, [args.idempotency_key]))
            .rows,
        {
          timeout: 5_000,
          interval: 20,
        },
      )
      .toEqual([{ result: null }]);
    await env.stack.serving(env.gatewayUrls[0]).kill();
    expect(await doomed).toBe('connection lost');

    const retry = await rawCall(env.mcpUrl(1), args);
    expect(retry.replayed).toBe('true');
    expect(JSON.parse(retry.text).result.structuredContent.count).toBe(1);
    const stored = await db.query(`SELECT result FROM gateway.idempotency_records WHERE key = $1`, [
      args.idempotency_key,
    ]);
    expect(resultText(`{"result":${stored.rows[0].result}}`)).toBe(resultText(retry.text));
    const mcp = await connectMcp(env.mcpUrl(1), env.apiKey);
    expect(await executions(mcp, counterKey)).toBe(1);
    await mcp.close();
  });
});
