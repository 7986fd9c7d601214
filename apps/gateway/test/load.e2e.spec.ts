import { inspectorCommand, scrapeMetric, startTestStack, type TestStack } from '@mcpgw/devstack';
import { Agent, request } from 'node:http';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Load with verification: LOAD_CALLS echo calls (2,000 in `npm test`; 20,000
 * with SOAK=1, `npm run test:soak`) at LOAD_CONCURRENCY (64) through the whole
 * stack. Every call must get exactly its own answer (a unique nonce echoed
 * back, the response's own id), none is lost, the database holds exactly one
 * chat_message and one agent_reply per call, and no process's RSS grows by
 * more than 20 % from the middle of the run to its end. RSS is read after a
 * full garbage collection (through each app's inspector, `--inspect` on
 * loopback for this test only): V8 collects lazily, so RSS as a run leaves it
 * swings by a third with no leak at all (both figures are printed). The 20 % bound holds
 * from RSS_CHECK_MIN_CALLS (10,000) calls up; in a shorter run the middle is
 * still warm-up (JIT, pools, caches), so the bound there is relaxed to 50 %
 * (a gross leak still fails). The figures are printed either way.
 */
const SOAK = process.env.SOAK === '1';
const CALLS = Number(process.env.LOAD_CALLS ?? (SOAK ? 20_000 : 2_000));
const CONCURRENCY = Number(process.env.LOAD_CONCURRENCY ?? 64);
const RSS_CHECK_MIN_CALLS = 10_000;
const RSS_MAX_GROWTH = CALLS >= RSS_CHECK_MIN_CALLS ? 0.2 : 0.5;
const RUN_ID = randomUUID().slice(0, 8);
/** From a full garbage collection to the RSS sample (not counted in the run's time). */
const SETTLE_MS = 1_000;

interface Answer {
  status: number;
  body: string;
}

/** One tools/call over a keep-alive socket: plain node:http, no SDK, so the client costs little. */
function post(url: URL, agent: Agent, headers: Record<string, string>, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        hostname: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          'content-length': String(Buffer.byteLength(body)),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const mib = (samples: Record<string, { mid?: number; end?: number }>) =>
  Object.fromEntries(
    Object.entries(samples).map(([name, { mid, end }]) => [
      name,
      { [`at ${CALLS / 2}`]: +(mid! / 1024).toFixed(1), [`at ${CALLS}`]: +(end! / 1024).toFixed(1) },
    ]),
  );

/** VmRSS of a process, in KiB. */
function rssKiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1]);
}

describe(`load with verification: ${CALLS} calls at concurrency ${CONCURRENCY}`, () => {
  let env: TestStack;
  let db: Client;

  const nodeArgs = process.env.STACK_NODE_ARGS;

  beforeAll(async () => {
    // Each app with its inspector on a free loopback port: the test collects garbage before it reads RSS.
    process.env.STACK_NODE_ARGS = `${nodeArgs ?? ''} --inspect=127.0.0.1:0`;
    // One key carries the whole load: its per-key quotas are lifted (this suite is about load, not limits).
    env = await startTestStack({
      env: { LOG_LEVEL: 'warn' },
      gatewayEnv: { QUOTA_CALLS_PER_SECOND: '0', QUOTA_CONCURRENT_CALLS: '0' },
    });
    process.env.STACK_NODE_ARGS = nodeArgs;
    if (nodeArgs === undefined) delete process.env.STACK_NODE_ARGS;
    db = new Client({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await env?.stop();
  });

  const stored = async () => {
    const { rows } = await db.query<{ type: string; n: number; nonces: number }>(
      `SELECT type, count(*)::int AS n,
              count(DISTINCT COALESCE(envelope->'tool_call'->'arguments'->>'text', envelope->'structured_content'->>'text'))::int AS nonces
         FROM messaging.messages
        WHERE COALESCE(envelope->'tool_call'->'arguments'->>'text', envelope->'structured_content'->>'text') LIKE $1
        GROUP BY type`,
      [`load-${RUN_ID}-%`],
    );
    return Object.fromEntries(rows.map((row) => [row.type, { n: row.n, nonces: row.nonces }]));
  };

  it(
    'every call gets its own answer, none is lost, each is stored once, and memory stays flat',
    async () => {
      const url = new URL(env.mcpUrl());
      const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, maxFreeSockets: CONCURRENCY });
      const headers = { 'x-agent-api-key': env.apiKey };
      const processes = env.stack.processes.filter((p) => p.running && p.pid);
      const rss: Record<string, { mid?: number; end?: number }> = {};
      const asRun: Record<string, { mid?: number; end?: number }> = {};
      /** RSS as the run leaves it, then after a full garbage collection (what is retained). */
      const sampleRss = async (at: 'mid' | 'end') => {
        for (const p of processes) (asRun[p.name] ??= {})[at] = rssKiB(p.pid!);
        for (const p of processes) {
          await inspectorCommand(p.inspectorUrl!, 'HeapProfiler.collectGarbage');
          await inspectorCommand(p.inspectorUrl!, 'HeapProfiler.collectGarbage');
        }
        await sleep(SETTLE_MS);
        for (const p of processes) (rss[p.name] ??= {})[at] = rssKiB(p.pid!);
      };

      const traces: string[] = [];
      const trace = async (at: number) => {
        const parts = await Promise.all(
          processes.map(async (p) => {
            const heap = p.managementUrl ? await scrapeMetric(p.managementUrl, 'nodejs_heap_size_used_bytes') : 0;
            return `${p.name} rss ${(rssKiB(p.pid!) / 1024).toFixed(0)} heap ${(heap / 1048576).toFixed(0)}`;
          }),
        );
        traces.push(`${at}: ${parts.join(' | ')}`);
      };
      const failures: string[] = [];
      const answered = new Set<number>();
      let next = 0;
      let done = 0;
      const worker = (end: number) => async () => {
        while (next < end) {
          const i = next++;
          const nonce = `load-${RUN_ID}-${i}-${randomUUID()}`;
          const body = JSON.stringify({
            jsonrpc: '2.0',
            id: i,
            method: 'tools/call',
            params: { name: 'echo', arguments: { text: nonce } },
          });
          try {
            const answer = await post(url, agent, headers, body);
            const message = answer.status === 200 ? JSON.parse(answer.body) : undefined;
            if (!message) failures.push(`call ${i}: HTTP ${answer.status} ${answer.body.slice(0, 200)}`);
            else if (message.id !== i) failures.push(`call ${i}: the response of request ${message.id}`);
            else if (message.error) failures.push(`call ${i}: ${message.error.code} ${message.error.message}`);
            else if (message.result.content?.[0]?.text !== nonce || message.result.structuredContent?.text !== nonce)
              failures.push(`call ${i}: another call's answer: ${JSON.stringify(message.result).slice(0, 200)}`);
            else answered.add(i);
          } catch (error) {
            failures.push(`call ${i}: ${(error as Error).message}`);
          }
          if (++done % (CALLS / 10) === 0) void trace(done);
        }
      };
      /** Calls up to `end`, at full concurrency, then RSS. */
      const runTo = async (end: number, at: 'mid' | 'end') => {
        const started = performance.now();
        await Promise.all(Array.from({ length: CONCURRENCY }, worker(end)));
        const ms = performance.now() - started;
        await sampleRss(at);
        return ms;
      };
      const firstHalfMs = await runTo(CALLS / 2, 'mid');
      const secondHalfMs = await runTo(CALLS, 'end');
      const elapsedMs = firstHalfMs + secondHalfMs;
      agent.destroy();

      const report = {
        calls: CALLS,
        concurrency: CONCURRENCY,
        seconds: +(elapsedMs / 1000).toFixed(1),
        callsPerSecond: Math.round(CALLS / (elapsedMs / 1000)),
        secondHalfCallsPerSecond: Math.round(CALLS / 2 / (secondHalfMs / 1000)),
        rssMiB: mib(rss),
        rssMiBBeforeGc: mib(asRun),
        failures: failures.length,
      };
      console.log(traces.join('\n'));
      console.log(`load report ${JSON.stringify(report, null, 2)}`);

      expect(failures.slice(0, 10)).toEqual([]);
      expect(answered.size).toBe(CALLS);
      // In the database: one chat_message and one agent_reply per call, each with its own nonce.
      expect(await stored()).toEqual({
        chat_message: { n: CALLS, nonces: CALLS },
        agent_reply: { n: CALLS, nonces: CALLS },
      });
      // Every process of the stack, from the middle of the run to its end.
      expect(Object.keys(rss).sort()).toEqual(['agent-pod-1', 'gateway-1', 'message-service-1']);
      for (const [name, { mid, end }] of Object.entries(rss)) {
        expect({ name, growth: end! / mid! - 1 }).toEqual({
          name,
          growth: expect.toSatisfy((g: number) => g <= RSS_MAX_GROWTH),
        });
      }
    },
    Math.max(120_000, CALLS * 20),
  );
});
