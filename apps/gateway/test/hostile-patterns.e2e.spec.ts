import { BusClient } from '@mcpgw/bus';
import { BusPattern } from '@mcpgw/contracts';
import { connectMcp, parsePrometheus, startTestStack, type McpConnection, type TestStack } from '@mcpgw/devstack';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A rogue agent registers the patterns and templates a backtracking engine
 * chokes on (issue 9: `^(a+)+$` doubles per character; `x{a}{b}{c}{d}{e}`
 * blocked the event loop 15 s on 200 characters). Clients then send 10 kB
 * of hostile input: each answer comes at once, and the gateway's event loop,
 * as its own /metrics says, and a concurrent ping, are not held up.
 */
const ROGUE = 'rogue-agent';
const HOSTILE = 10_240;
const ROUNDS = 5;

describe('patterns and templates from agents run in linear time', () => {
  let env: TestStack;
  let nc: NatsConnection;
  let bus: BusClient;
  let rogue: McpConnection;
  let demo: McpConnection;

  const register = (skills: unknown[], resource_templates: unknown[] = []) =>
    bus.requestAs(ROGUE, BusPattern.RegisterAgent, {
      workspace_id: 'rogue',
      agent_id: ROGUE,
      pod_id: 'rogue-pod',
      skills: skills as never,
      resource_templates: resource_templates as never,
    });
  const skill = (name: string, input_schema: Record<string, unknown>) => ({ name, description: name, input_schema });
  const evil = skill('evil_pattern', {
    type: 'object',
    properties: { text: { type: 'string', pattern: '^(a+)+$' } },
    required: ['text'],
  });

  /** The JSON-RPC error of a request (they must all fail), and how long it took. */
  const timedError = async (request: () => Promise<unknown>) => {
    const started = performance.now();
    const error = await request().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpError);
    return { error: error as McpError, ms: performance.now() - started };
  };

  /** The gateway's event-loop delay since the last scrape (prom-client resets its histogram on each). */
  const eventLoopLag = async () => {
    const text = await (await fetch(`${env.stack.managementUrlOf(env.gatewayUrls[0])}/metrics`)).text();
    const value = (name: string) => parsePrometheus(text).find((s) => s.name === name)!.value * 1000;
    return { p99: value('nodejs_eventloop_lag_p99_seconds'), max: value('nodejs_eventloop_lag_max_seconds') };
  };

  beforeAll(async () => {
    env = await startTestStack();
    nc = await env.connectNats({ role: 'agent', agentId: ROGUE });
    bus = new BusClient(nc, {
      url: env.stack.settings.natsUrl,
      prefix: env.stack.settings.busPrefix,
      name: ROGUE,
      identity: { role: 'agent', agentId: ROGUE },
    });
    await register([evil], [{ uriTemplate: 'x{a}{b}{c}{d}{e}', name: 'evil template' }]);
    const key = await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', ROGUE);
    rogue = await connectMcp(env.mcpUrl(0, ROGUE), key.key);
    demo = await connectMcp(env.mcpUrl(), env.apiKey);
  });

  afterAll(async () => {
    await rogue?.close();
    await demo?.close();
    await nc?.close();
    await env?.stop();
  });

  it('refuses at registration what cannot run in linear time or reaches outside, naming it', async () => {
    await expect(
      register([skill('backref', { type: 'object', properties: { a: { type: 'string', pattern: '^(a)\\1$' } } })]),
    ).rejects.toThrow(/skill backref: .*backreferences and lookaround/);
    await expect(
      register([skill('lookahead', { type: 'object', patternProperties: { '^(?!x)': {} } })]),
    ).rejects.toThrow(/skill lookahead: .*refused/);
    await expect(register([skill('remote', { $ref: 'https://example.com/s.json' })])).rejects.toThrow(
      /skill remote: .*not local/,
    );
    await expect(register([evil], [{ uriTemplate: 'x{a', name: 'broken' }])).rejects.toThrow(/never closed/);
    // The refusals left the registration in place.
    expect((await rogue.client.listTools()).tools.map((t) => t.name)).toEqual(['evil_pattern']);
  });

  it('answers 10 kB hostile inputs at once, without holding up the event loop or a concurrent call', async () => {
    const call = (text: string) => rogue.client.callTool({ name: 'evil_pattern', arguments: { text } });
    const read = (uri: string) => rogue.client.readResource({ uri });
    // Warm the catalogues and connections; the scrape resets the lag histogram.
    await timedError(() => call('b'));
    await demo.client.ping();
    const idle: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      await demo.client.ping();
      idle.push(performance.now() - started);
    }
    await eventLoopLag();

    let hostileDone = false;
    const pings: number[] = [];
    const pinging = (async () => {
      while (!hostileDone) {
        const started = performance.now();
        await demo.client.ping();
        pings.push(performance.now() - started);
      }
    })();
    const hostile: number[] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const pattern = await timedError(() => call(`${'a'.repeat(HOSTILE)}!`));
        expect(pattern.error.code).toBe(-32602);
        expect(pattern.error.message).toContain('must match pattern');
        const overCap = await timedError(() => call('a'.repeat(70_000)));
        expect(overCap.error.code).toBe(-32602);
        expect(overCap.error.message).toContain('longer than the 65536 allowed');
        // A URI the matcher scans: 2 kB, the cap (the old regex took 98 s on 400 characters).
        const template = await timedError(() => read(`x${'a'.repeat(2_000)}/`));
        expect(template.error.code).toBe(-32002);
        const overLong = await timedError(() => read(`x${'a'.repeat(HOSTILE)}/`));
        expect(overLong.error.code).toBe(-32602);
        expect(overLong.error.message).toContain('at most 2048');
        hostile.push(pattern.ms, overCap.ms, template.ms, overLong.ms);
      }
    } finally {
      hostileDone = true;
      await pinging;
    }
    const lag = await eventLoopLag();
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.log(
      `hostile calls: max ${Math.max(...hostile).toFixed(1)} ms, median ${median(hostile).toFixed(1)} ms; ` +
        `gateway event-loop delay p99 ${lag.p99.toFixed(1)} ms, max ${lag.max.toFixed(1)} ms; ` +
        `concurrent ping ${pings.length}x: max ${Math.max(...pings).toFixed(1)} ms ` +
        `(idle median ${median(idle).toFixed(1)} ms, max ${Math.max(...idle).toFixed(1)} ms)`,
    );
    expect(Math.max(...hostile)).toBeLessThan(1_000);
    // The histogram samples every 10 ms (prom-client's resolution), so an idle loop reads about 10 ms.
    expect(lag.max).toBeLessThan(100 + 10);
    expect(lag.p99).toBeLessThan(100);
    expect(pings.length).toBeGreaterThan(0);
    expect(Math.max(...pings) - median(idle)).toBeLessThan(100);
  });
});
