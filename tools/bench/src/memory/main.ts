import { inspectorCommand, startTestStack, type ServiceProcess, type TestStack } from '@mcpgw/devstack';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  inBatches,
  openCallStream,
  openListenStream,
  openSession,
  type Endpoint,
  type HeldStream,
} from './held-requests';

/**
 * `npm run bench:memory`: what one MCP session and one open stream cost the
 * gateway (and the message service and the pod beside it). One stack (one gateway, one
 * message service, one pod, its own nats-server with auth on), each app with its
 * inspector on so that memory is read after a full garbage collection. Then:
 * BENCH_SESSIONS sessions opened (initialize, notifications/initialized) and kept;
 * a GET stream held open on BENCH_STREAMS of them; BENCH_CALLS `sleep` calls held
 * in flight, each its own SSE response with progress. Memory before and after each
 * step, divided by the count. Prints a summary and the figures as JSON
 * (docs/scaling.md has the recorded run). Asserts nothing; not part of `npm test`.
 */
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 1000);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000);
const CALLS = Number(process.env.BENCH_CALLS ?? 500);
const WIDTH = 16;
const NO_LIMITS = { QUOTA_SESSIONS: '0', QUOTA_STREAMS: '0', QUOTA_CALLS_PER_SECOND: '0', QUOTA_CONCURRENT_CALLS: '0' };

interface Reading {
  rssKiB: number;
  heapKiB: number;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

function rssKiB(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
}

/** RSS and V8 heap in use after two full collections and a moment to settle. */
async function read(p: ServiceProcess): Promise<Reading> {
  await inspectorCommand(p.inspectorUrl!, 'HeapProfiler.collectGarbage');
  await inspectorCommand(p.inspectorUrl!, 'HeapProfiler.collectGarbage');
  await sleep(1_000);
  const heap = (await inspectorCommand(p.inspectorUrl!, 'Runtime.getHeapUsage')) as { usedSize: number };
  return { rssKiB: rssKiB(p.pid!), heapKiB: heap.usedSize / 1024 };
}

async function readAll(apps: ServiceProcess[]): Promise<Record<string, Reading>> {
  const readings: Record<string, Reading> = {};
  for (const p of apps) readings[p.name] = await read(p);
  return readings;
}

interface Step {
  step: string;
  count: number;
  ms: number;
  /** Per app: growth over the step, per item, in KiB. */
  perItemKiB: Record<string, { rss: number; heap: number }>;
  after: Record<string, Reading>;
}

async function measure(apps: ServiceProcess[], step: string, count: number, work: () => Promise<void>): Promise<Step> {
  const before = await readAll(apps);
  const started = Date.now();
  await work();
  const ms = Date.now() - started;
  const after = await readAll(apps);
  const perItemKiB = Object.fromEntries(
    apps.map((p) => [
      p.name,
      {
        rss: (after[p.name].rssKiB - before[p.name].rssKiB) / count,
        heap: (after[p.name].heapKiB - before[p.name].heapKiB) / count,
      },
    ]),
  );
  const line = Object.entries(perItemKiB)
    .map(([name, v]) => `${name} rss ${v.rss.toFixed(1)} heap ${v.heap.toFixed(1)}`)
    .join(' | ');
  log(`${step} (${count} in ${ms} ms), KiB each: ${line}`);
  return { step, count, ms, perItemKiB, after };
}

async function main(): Promise<void> {
  const nodeArgs = process.env.STACK_NODE_ARGS;
  process.env.STACK_NODE_ARGS = `${nodeArgs ?? ''} --inspect=127.0.0.1:0`;
  log('starting the stack…');
  const env: TestStack = await startTestStack({ env: { LOG_LEVEL: 'warn' }, gatewayEnv: NO_LIMITS });
  const held: HeldStream[] = [];
  try {
    const apps = env.stack.processes;
    const endpoint: Endpoint = { url: new URL(env.mcpUrl()), apiKey: env.apiKey };
    // Warm-up: code paths compiled, pools and caches filled, before the first reading.
    const warm = await inBatches(50, WIDTH, (i) => openSession(endpoint, i));
    for (const stream of await inBatches(50, WIDTH, (i) => openListenStream(endpoint, warm[i]))) stream.close();
    for (const stream of await inBatches(20, WIDTH, (i) => openCallStream(endpoint, warm[i], i, 60_000, 1_000)))
      stream.close();
    await sleep(2_000);

    let sessions: string[] = [];
    const steps: Step[] = [];
    steps.push(
      await measure(apps, 'sessions (initialize + initialized, kept)', SESSIONS, async () => {
        sessions = await inBatches(SESSIONS, WIDTH, (i) => openSession(endpoint, 100 + i));
      }),
    );
    steps.push(
      await measure(apps, 'GET streams held open', STREAMS, async () => {
        held.push(...(await inBatches(STREAMS, WIDTH, (i) => openListenStream(endpoint, sessions[i % SESSIONS]))));
      }),
    );
    // Long enough to outlive the step's readings; progress every second keeps each stream busy.
    steps.push(
      await measure(apps, 'calls in flight (sleep, progress every 1 s)', CALLS, async () => {
        held.push(
          ...(await inBatches(CALLS, WIDTH, (i) =>
            openCallStream(endpoint, sessions[i % SESSIONS], i, 120_000, 1_000),
          )),
        );
      }),
    );
    process.stdout.write(`${JSON.stringify({ sessions: SESSIONS, streams: STREAMS, calls: CALLS, steps }, null, 2)}\n`);
  } finally {
    for (const stream of held) stream.close();
    await env.stop();
  }
}

main().catch((error: Error) => {
  log(`bench:memory failed: ${error.stack ?? error.message}`);
  process.exit(1);
});
