import { AgentInbox } from '@mcpgw/contracts';
import { mintGrant, startTestStack, workspaceRoot, type TestStack } from '@mcpgw/devstack';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LatencyRecorder } from '../load/latency';

/**
 * Many agents on one stack (issue 26): `agents` agents hosted by one process
 * (agents-host.ts), each with its own NATS credentials and inbox consumer,
 * started all at once; then every agent's tools/list and one call each
 * through the gateway (surface B, a grant per agent), then `clients` callers
 * spread over all of them for `seconds`. What it costs: registration time,
 * latencies, each process's memory before and after, consumers on the inbox
 * stream. Used by `npm run bench:agents` (1,000) and by an e2e test (200).
 */
export interface FleetOptions {
  agents: number;
  clients: number;
  seconds: number;
  /** Progress lines (stderr for the bench). */
  log?: (line: string) => void;
}

export interface Latencies {
  count: number;
  errors: number;
  p50: number;
  p99: number;
  max: number;
}

export interface FleetFigures {
  agents: number;
  /** Agents that started: connected, consumer bound, registration accepted. */
  serving: number;
  failures: string[];
  /** From the host's start to every agent serving (the registration storm). */
  startAllMs: number;
  /** tools/list of every agent (a grant each, first use: the catalogue is read). */
  toolsList: Latencies;
  /** One call to every agent: how many answered with their own text. */
  answered: number;
  firstCalls: Latencies;
  /** `clients` callers, each call to the next agent round the fleet. */
  spread: Latencies & { callsPerSecond: number };
  /** Resident memory in MiB, with no agents and with them all serving. */
  memoryMiB: Record<string, { before: number; after: number }>;
  inboxConsumers: number;
}

/** The host, built (`npm run build`): the e2e test runs this file from its sources. */
const HOST = join(workspaceRoot(), 'tools/bench/dist/agents/agents-host.js');

export async function runFleet(options: FleetOptions): Promise<FleetFigures> {
  const log = options.log ?? (() => undefined);
  const env = await startTestStack({
    pods: 0,
    env: { LOG_LEVEL: 'warn', QUOTA_CONCURRENT_CALLS: '0', QUOTA_CALLS_PER_SECOND: '0' },
  });
  let host: ChildProcess | undefined;
  try {
    const ids = Array.from({ length: options.agents }, (_, i) => `fleet-${String(i).padStart(4, '0')}`);
    const before = memoryOf(env);
    log(`issuing ${ids.length} agents' NATS credentials…`);
    const creds = await Promise.all(ids.map((agentId) => env.nats!.credsFile({ role: 'agent', agentId })));
    log(`starting ${ids.length} agents in one process…`);
    const started = await startHost(env, ids, creds);
    host = started.host;
    const { serving, failed, ms } = started.report;
    log(`${serving} agents serving after ${ms} ms`);

    const grants = await Promise.all(ids.map((agentId) => mintGrant(env.grantKeyFile, { agentId, tools: ['echo'] })));
    const post = (i: number, body: object) => surfaceB(env, ids[i], grants[i], body);

    const toolsList = new LatencyRecorder();
    let listErrors = 0;
    await inParallel(ids.length, 16, async (i) => {
      const t0 = performance.now();
      const answer = await post(i, { method: 'tools/list' });
      if (answer?.result?.tools?.[0]?.name === 'echo') toolsList.add(performance.now() - t0);
      else listErrors++;
    });

    const firstCalls = new LatencyRecorder();
    let answered = 0;
    await inParallel(ids.length, 16, async (i) => {
      const t0 = performance.now();
      const answer = await post(i, { method: 'tools/call', params: { name: 'echo', arguments: { text: ids[i] } } });
      if (answer?.result?.structuredContent?.output?.content?.[0]?.text === ids[i]) {
        answered++;
        firstCalls.add(performance.now() - t0);
      }
    });
    log(`tools/list and one call to each: ${answered} of ${ids.length} answered`);

    const spread = new LatencyRecorder();
    let spreadErrors = 0;
    let next = 0;
    const stopAt = Date.now() + options.seconds * 1000;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: options.clients }, async () => {
        while (Date.now() < stopAt) {
          const i = next++ % ids.length;
          const begun = performance.now();
          const answer = await post(i, { method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } });
          if (answer?.result?.structuredContent) spread.add(performance.now() - begun);
          else spreadErrors++;
        }
      }),
    );
    const elapsedS = (performance.now() - t0) / 1000;

    const after = memoryOf(env, host.pid);
    const memoryMiB = Object.fromEntries(
      Object.entries(after).map(([name, mib]) => [name, { before: before[name] ?? 0, after: mib }]),
    );
    return {
      agents: ids.length,
      serving,
      failures: failed,
      startAllMs: ms,
      toolsList: latencies(toolsList, listErrors),
      answered,
      firstCalls: latencies(firstCalls, ids.length - answered),
      spread: { ...latencies(spread, spreadErrors), callsPerSecond: spread.count / elapsedS },
      memoryMiB,
      inboxConsumers: await consumerCount(env),
    };
  } finally {
    if (host && host.exitCode === null) {
      const exited = new Promise((resolve) => host!.once('exit', resolve));
      host.kill('SIGTERM');
      const timer = setTimeout(() => host!.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    await env.stop();
  }
}

/** The host process, once it says every agent started (or how many did not). */
async function startHost(
  env: TestStack,
  ids: string[],
  creds: string[],
): Promise<{ host: ChildProcess; report: { serving: number; failed: string[]; ms: number } }> {
  const dir = creds[0].slice(0, creds[0].lastIndexOf('/'));
  const host = spawn(process.execPath, [HOST], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      AGENT_IDS: ids.join(','),
      CREDS_TEMPLATE: join(dir, 'agent-{agent}.creds'),
      NATS_URL: env.nats!.url,
      BUS_PREFIX: env.stack.settings.busPrefix,
      LOG_LEVEL: 'warn',
    },
  });
  let stderr = '';
  host.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4_000)));
  const report = await new Promise<{ serving: number; failed: string[]; ms: number }>((resolve, reject) => {
    let out = '';
    host.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line && out.includes('\n')) resolve(JSON.parse(line));
    });
    host.once('exit', (code) => reject(new Error(`agents-host exited ${code}: ${stderr}`)));
  });
  return { host, report };
}

/** What the fleet reads of a surface B answer. */
interface Answer {
  result?: {
    tools?: { name: string }[];
    structuredContent?: { output?: { content?: { text?: string }[] } };
  };
}

/** A JSON-RPC request on surface B; the parsed answer, or undefined when it failed. */
async function surfaceB(env: TestStack, agentId: string, grant: string, body: object): Promise<Answer | undefined> {
  try {
    const response = await fetch(`${env.gatewayUrls[0]}/workspaces/demo/agents/${agentId}/mcp/http`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${grant}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...body }),
    });
    return response.ok ? ((await response.json()) as Answer) : undefined;
  } catch {
    return undefined;
  }
}

async function inParallel(count: number, width: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

function latencies(recorder: LatencyRecorder, errors: number): Latencies {
  const { p50, p99, max } = recorder.summary();
  return { count: recorder.count, errors, p50, p99, max };
}

/** Resident memory (MiB) of the stack's apps, its nats-server and the host. */
function memoryOf(env: TestStack, hostPid?: number): Record<string, number> {
  const pids: [string, number | undefined][] = [
    ...env.stack.processes.filter((p) => p.running).map((p): [string, number | undefined] => [p.name, p.pid]),
    ['nats-server', natsServerPid(env.nats!.dir)],
    ...(hostPid ? [['agents-host', hostPid] as [string, number]] : []),
  ];
  return Object.fromEntries(pids.flatMap(([name, pid]) => (pid ? [[name, rssMiB(pid)]] : [])));
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
}

/** This stack's nats-server: the one whose command line names its directory. */
function natsServerPid(dir: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.startsWith('nats-server') && cmdline.includes(dir)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

async function consumerCount(env: TestStack): Promise<number> {
  const nc = await env.connectNats();
  try {
    const jsm = await nc.jetstreamManager();
    return (await jsm.streams.info(AgentInbox.streamName(env.stack.settings.busPrefix))).state.consumer_count;
  } finally {
    await nc.close();
  }
}
