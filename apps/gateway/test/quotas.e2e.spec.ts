import { connectMcp, parsePrometheus, startTestStack, type TestStack } from '@mcpgw/devstack';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

type Answer = { status: number; body: any; headers: Headers };
type Limit = 'concurrent_calls' | 'calls_per_second' | 'sessions' | 'streams';

const AGENT = 'demo-agent';
const WS = 'demo';
const QUOTA_EXCEEDED = -32005;
const ACCEPT = 'application/json, text/event-stream';
/** A revision whose GET streams open with a priming event, so the headers arrive at once. */
const PROTOCOL = '2025-11-25';

/**
 * Quotas per API key and per grant task (apps/gateway/src/quotas/README.md),
 * against two gateways sharing one PostgreSQL and one NATS: each limit answers
 * HTTP 429 with Retry-After and JSON-RPC -32005; the call and stream limits hold
 * across replicas once the gossip has run; sessions are counted exactly; the
 * admin CLI changes an agent's limits on every replica; slots come back when
 * calls end, fail or time out. Every test uses keys or tasks of its own.
 */
describe('quotas', () => {
  let env: TestStack;
  let managementUrls: string[];

  beforeAll(async () => {
    env = await startTestStack({ gateways: 2 });
    managementUrls = env.gatewayUrls.map((url) => env.stack.serving(url).managementUrl!);
  });

  afterAll(async () => {
    await env?.stop();
  });

  const newKey = async () =>
    (await env.stack.admin<{ id: string; key: string }>('apikey', 'create', '--agent', AGENT)).key;

  /** The CLI sets the agent's limits (the others back to the default); resolves once both gateways apply them. */
  async function setQuotas(limits: Partial<Record<Limit, number>>): Promise<void> {
    const flag = (name: Limit) => [`--${name.replaceAll('_', '-')}`, String(limits[name] ?? 'default')];
    const shown = await env.stack.admin<{ limits: Record<Limit, number> }>(
      'agent',
      'quotas',
      '--agent',
      AGENT,
      ...flag('concurrent_calls'),
      ...flag('calls_per_second'),
      ...flag('sessions'),
      ...flag('streams'),
    );
    for (const [name, value] of Object.entries(limits)) expect(shown.limits[name as Limit]).toBe(value);
    // Wait on state: every gateway's mcpgw_quota_limit shows what the CLI set.
    await eventually(async () => {
      for (const url of managementUrls) {
        const inForce = await limitsInForce(url);
        for (const [name, value] of Object.entries(shown.limits)) expect(inForce[name]).toBe(value);
      }
    });
  }

  async function limitsInForce(managementUrl: string): Promise<Record<string, number>> {
    const text = await (await fetch(`${managementUrl}/metrics`)).text();
    const samples = parsePrometheus(text).filter((s) => s.name === 'mcpgw_quota_limit');
    const of = (agent: string) =>
      Object.fromEntries(samples.filter((s) => s.labels.agent === agent).map((s) => [s.labels.limit, s.value]));
    const own = of(AGENT);
    return Object.keys(own).length ? own : of('(default)');
  }

  const post = async (gateway: number, key: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(env.mcpUrl(gateway), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, 'x-agent-api-key': key, ...headers },
      body: JSON.stringify(body),
    });
    return answer(response);
  };

  let ids = 0;
  const call = (name: string, args: Record<string, unknown> = {}, meta?: Record<string, unknown>) => ({
    jsonrpc: '2.0',
    id: ++ids,
    method: 'tools/call',
    params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
  });
  const echo = () => call('echo', { text: 'hi' });
  const slow = (ms: number) => call('sleep', { ms });

  const initialize = (gateway: number, key: string) =>
    post(gateway, key, {
      jsonrpc: '2.0',
      id: ++ids,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'quota-test', version: '1' } },
    });

  /** A GET stream of a session; `close` ends it from the client's side. */
  async function openStream(gateway: number, key: string, sessionId: string) {
    const controller = new AbortController();
    const response = await fetch(env.mcpUrl(gateway), {
      headers: {
        accept: 'text/event-stream',
        'x-agent-api-key': key,
        'mcp-session-id': sessionId,
        'mcp-protocol-version': PROTOCOL,
      },
      signal: controller.signal,
    });
    if (response.status !== 200) return { ...(await answer(response)), close: () => undefined };
    return { status: 200, body: undefined, headers: response.headers, close: () => controller.abort() };
  }

  function expectRefused(refused: Answer, limit: Limit, max: number): void {
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
    expect(refused.body.jsonrpc).toBe('2.0');
    expect(refused.body.error.code).toBe(QUOTA_EXCEEDED);
    expect(refused.body.error.data).toEqual({ limit, max, retry_after_seconds: retryAfter });
    expect(refused.body.error.message).toMatch(/^Too many requests/);
  }

  it('the admin CLI shows the defaults, sets an agent override, and puts a limit back to its default', async () => {
    const shown = await env.stack.admin<any>('agent', 'quotas', '--agent', AGENT);
    expect(shown.limits).toEqual(shown.defaults);
    expect(shown.defaults).toEqual({ concurrent_calls: 64, calls_per_second: 100, sessions: 256, streams: 32 });
    const set = await env.stack.admin<any>('agent', 'quotas', '--agent', AGENT, '--streams', '3');
    expect(set.limits.streams).toBe(3);
    expect(set.overrides).toEqual({ concurrent_calls: null, calls_per_second: null, sessions: null, streams: 3 });
    const reset = await env.stack.admin<any>('agent', 'quotas', '--agent', AGENT, '--streams', 'default');
    expect(reset.limits.streams).toBe(32);
    await expect(env.stack.admin('agent', 'quotas', '--agent', AGENT, '--sessions=-1')).rejects.toThrow(/whole number/);
    await expect(env.stack.admin('agent', 'quotas', '--agent', 'no-such-agent', '--sessions', '1')).rejects.toThrow(
      /no agent/,
    );
    await expect(env.stack.admin('agent', 'quotas', '--agent', 'no-such-agent')).rejects.toThrow(/no agent/);
  });

  it('concurrent calls: the third call of a key with two in flight is refused; the slots come back when they end', async () => {
    await setQuotas({ concurrent_calls: 2 });
    const key = await newKey();
    const running = [post(0, key, slow(1_500)), post(0, key, slow(1_500))];
    await eventuallyInFlight(0, 2);
    expectRefused(await post(0, key, echo()), 'concurrent_calls', 2);
    // Another key of the same agent has slots of its own.
    expect((await post(0, await newKey(), echo())).status).toBe(200);
    for (const done of await Promise.all(running)) expect(done.body.result.isError).toBeFalsy();
    // Released in finally: both slots are free again at once.
    const again = await Promise.all([post(0, key, echo()), post(0, key, echo())]);
    expect(again.map((a) => a.status)).toEqual([200, 200]);
  });

  it('concurrent calls: a 2025-03-26 batch is admitted whole or refused whole', async () => {
    await setQuotas({ concurrent_calls: 2 });
    const key = await newKey();
    const batch = (n: number) => Array.from({ length: n }, () => echo());
    const headers = { 'mcp-protocol-version': '2025-03-26' };
    expectRefused(await post(0, key, batch(3), headers), 'concurrent_calls', 2);
    const admitted = await post(0, key, batch(2), headers);
    expect(admitted.status).toBe(200);
    expect(admitted.body).toHaveLength(2);
  });

  it('concurrent calls: a slot is released when the call times out', async () => {
    await setQuotas({ concurrent_calls: 1 });
    const key = await newKey();
    const timedOut = await post(0, key, call('sleep', { ms: 3_000 }, { 'mcpgw/timeoutMs': 300 }));
    expect(timedOut.body.error.code).toBe(-32003);
    const next = await post(0, key, echo());
    expect(next.status).toBe(200);
    expect(next.body.result.isError).toBeFalsy();
  });

  it('concurrent calls: a 2026-07-28 client that closes its request gets the slot back at once', async () => {
    await setQuotas({ concurrent_calls: 1 });
    const key = await newKey();
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'quota-test', version: '1' },
    };
    const leaving = new AbortController();
    const abandoned = fetch(env.mcpUrl(0), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: ACCEPT,
        'x-agent-api-key': key,
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'sleep',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'sleep', arguments: { ms: 10_000 }, _meta: meta },
      }),
      signal: leaving.signal,
    }).catch(() => undefined);
    await eventuallyInFlight(0, 1);
    expectRefused(await post(0, key, echo()), 'concurrent_calls', 1);
    leaving.abort();
    await abandoned;
    await eventuallyInFlight(0, 0); // released in finally when the closed request is cancelled, not 10 s later
    expect((await post(0, key, echo())).status).toBe(200);
  });

  it('concurrent calls hold across two gateways: one slow call on each, the third is refused on both once gossip has run', async () => {
    await setQuotas({ concurrent_calls: 2 });
    const key = await newKey();
    const running = [post(0, key, slow(4_000)), post(1, key, slow(4_000))];
    const started = Date.now();
    for (const gateway of [0, 1]) {
      // Each gateway holds one call itself; the other's arrives by gossip (about a second).
      const refused = await eventuallyRefused(() => post(gateway, key, echo()));
      expectRefused(refused, 'concurrent_calls', 2);
      console.log(`gateway ${gateway} refused the third call ${Date.now() - started} ms after the two began`);
    }
    await Promise.all(running);
  });

  it('calls per second: a burst over the limit is cut at the limit, and a second later calls pass again', async () => {
    await setQuotas({ calls_per_second: 3 });
    const key = await newKey();
    const burst = await Promise.all(Array.from({ length: 5 }, () => post(0, key, echo())));
    expect(burst.filter((a) => a.status === 200)).toHaveLength(3);
    const refused = burst.filter((a) => a.status === 429);
    expect(refused).toHaveLength(2);
    for (const r of refused) expectRefused(r, 'calls_per_second', 3);
    await sleep(1_100); // the window is the last second: this is the behaviour under test
    expect((await post(0, key, echo())).status).toBe(200);
  });

  it("calls per second hold across two gateways: gateway 1 refuses on gateway 0's rate while its own is under the limit", async () => {
    await setQuotas({ calls_per_second: 10 });
    const key = await newKey();
    let hammering = true;
    let saturated = false;
    // 25 calls a second at gateway 0, in fives, until gateway 1's test is over: gateway 0 runs at its limit.
    const hammer = (async () => {
      while (hammering) {
        for (let i = 0; i < 5; i++)
          void post(0, key, echo()).then((answered) => {
            if (answered.status === 429) saturated = true;
          });
        await sleep(200);
      }
    })();
    const admittedOn1: number[] = [];
    try {
      // Gateway 1 keeps out until gateway 0 alone is at 10/s, and a gossip round (1 s) has told it so:
      // a refusal then comes from gateway 0's rate, not from the two sharing the limit at its edge.
      await eventually(async () => expect(saturated).toBe(true), 10_000);
      await sleep(1_500);
      const refused = await eventuallyRefused(async () => {
        const answered = await post(1, key, echo());
        if (answered.status === 200) admittedOn1.push(Date.now());
        await sleep(300);
        return answered;
      }, 15_000);
      expectRefused(refused, 'calls_per_second', 10);
      // Gateway 1 itself admitted far fewer than 10 in the last second: the refusal came from the gossip.
      expect(admittedOn1.filter((t) => Date.now() - t < 1_000).length).toBeLessThan(10);
    } finally {
      hammering = false;
      await hammer;
    }
  });

  it('open sessions are counted exactly across gateways; ending one frees its place', async () => {
    await setQuotas({ sessions: 2 });
    const key = await newKey();
    const first = await initialize(0, key);
    const second = await initialize(1, key);
    expect([first.status, second.status]).toEqual([200, 200]);
    const refused = await initialize(0, key);
    expectRefused(refused, 'sessions', 2);
    expect(refused.headers.get('mcp-session-id')).toBeNull();
    expectRefused(await initialize(1, key), 'sessions', 2);
    // Another key's sessions are its own.
    expect((await initialize(1, await newKey())).status).toBe(200);

    const ended = await fetch(env.mcpUrl(1), {
      method: 'DELETE',
      headers: { 'x-agent-api-key': key, 'mcp-session-id': first.headers.get('mcp-session-id')! },
    });
    expect(ended.status).toBe(204);
    expect((await initialize(0, key)).status).toBe(200);
  });

  it('open GET streams: the second stream is refused on the same gateway at once, on the other once gossip has run', async () => {
    await setQuotas({ streams: 1 });
    const key = await newKey();
    const session = (await initialize(0, key)).headers.get('mcp-session-id')!;
    const open = await openStream(0, key, session);
    expect(open.status).toBe(200);
    try {
      expectRefused(await openStream(0, key, session), 'streams', 1);
      const refused = await eventuallyRefused(async () => {
        const other = await openStream(1, key, session);
        other.close(); // admitted before the gossip arrived: give the slot back and try again
        if (other.status === 200) await sleep(200);
        return other;
      });
      expectRefused(refused, 'streams', 1);
    } finally {
      open.close();
    }
    // The stream's slot is released when it closes; the other gateway hears it by gossip.
    const reopened = await eventually(async () => {
      const again = await openStream(1, key, session);
      expect(again.status).toBe(200);
      return again;
    });
    reopened.close();
  });

  it('the SDK client over a quota gets the JSON-RPC error', async () => {
    await setQuotas({ calls_per_second: 1 });
    const mcp = await connectMcp(env.mcpUrl(0), await newKey());
    try {
      await mcp.client.callTool({ name: 'echo', arguments: { text: 'first' } });
      await expect(mcp.client.callTool({ name: 'echo', arguments: { text: 'second' } })).rejects.toThrow(
        /Too many requests/,
      );
    } finally {
      await mcp.close();
    }
  });

  describe('per grant task (surface B)', () => {
    const mint = async (task: string) =>
      (
        await env.stack.admin<{ grant: string }>(
          'grant',
          'mint',
          '--workspace',
          WS,
          '--agent',
          AGENT,
          '--task',
          task,
          '--tools',
          'echo,sleep',
        )
      ).grant;
    const grantPost = async (gateway: number, grant: string, body: unknown) =>
      answer(
        await fetch(`${env.gatewayUrls[gateway]}/workspaces/${WS}/agents/${AGENT}/mcp/http`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${grant}` },
          body: JSON.stringify(body),
        }),
      );

    it("a task's concurrent calls: over the limit is 429 -32005 with Retry-After; another task is not affected", async () => {
      await setQuotas({ concurrent_calls: 1 });
      const grant = await mint('quota-task');
      const running = grantPost(0, grant, slow(1_500));
      await eventuallyInFlight(0, 1);
      const refused = await grantPost(0, grant, echo());
      expectRefused(refused, 'concurrent_calls', 1);
      expect(refused.body.error.message).toMatch(/per task/);
      expect((await grantPost(0, await mint('another-task'), echo())).status).toBe(200);
      expect((await running).status).toBe(200);
      expect((await grantPost(0, grant, echo())).status).toBe(200);
    });

    it("a task's calls per second: the third call within the second is refused", async () => {
      await setQuotas({ calls_per_second: 2 });
      const grant = await mint('quota-rate-task');
      const first = await Promise.all([grantPost(0, grant, echo()), grantPost(0, grant, echo())]);
      expect(first.map((a) => a.status)).toEqual([200, 200]);
      expectRefused(await grantPost(0, grant, echo()), 'calls_per_second', 2);
    });
  });

  it('counts every refusal by limit in mcpgw_quota_refusals_total', async () => {
    const refusals: Record<string, number> = {};
    for (const url of managementUrls) {
      const text = await (await fetch(`${url}/metrics`)).text();
      for (const s of parsePrometheus(text).filter((s) => s.name === 'mcpgw_quota_refusals_total'))
        refusals[s.labels.limit] = (refusals[s.labels.limit] ?? 0) + s.value;
    }
    for (const limit of ['concurrent_calls', 'calls_per_second', 'sessions', 'streams'])
      expect(refusals[limit]).toBeGreaterThan(0);
  });

  /** Wait on state: the gateway holds `n` calls (probing would take a slot itself). */
  async function eventuallyInFlight(gateway: number, n: number): Promise<void> {
    await eventually(async () => {
      const text = await (await fetch(`${managementUrls[gateway]}/metrics`)).text();
      const inFlight = parsePrometheus(text).find(
        (s) => s.name === 'mcpgw_quota_in_flight' && s.labels.kind === 'calls',
      );
      expect(inFlight?.value).toBe(n);
    });
  }
});

async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  expect(text).not.toMatch(/\n\s+at |\.ts:\d+/);
  const json = text.startsWith('event:') ? text.split('\ndata: ')[1] : text;
  return { status: response.status, body: json ? JSON.parse(json) : undefined, headers: response.headers };
}

/** Retry `probe` until it answers 429 (each probe that passes first is the gossip not having arrived yet). */
async function eventuallyRefused(probe: () => Promise<Answer>, withinMs = 4_000): Promise<Answer> {
  const until = Date.now() + withinMs;
  for (;;) {
    const answered = await probe();
    if (answered.status === 429) return answered;
    expect(answered.status).toBe(200);
    if (Date.now() > until) throw new Error(`not refused within ${withinMs} ms`);
    await sleep(100);
  }
}

async function eventually<T>(check: () => Promise<T>, withinMs = 5_000): Promise<T> {
  const until = Date.now() + withinMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > until) throw error;
      await sleep(100);
    }
  }
}
