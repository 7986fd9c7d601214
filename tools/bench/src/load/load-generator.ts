import { Agent } from 'node:http';
import { LatencyRecorder } from './latency';
import { LeanA2aClient } from './a2a-http';
import { LeanMcpClient, type Target } from './mcp-http';
import type { LoadClose, LoadGo, LoadPlan, LoadReport, LoadResult } from './protocol';
import { LeanRestClient } from './rest-http';

type LeanClient = LeanMcpClient | LeanRestClient | LeanA2aClient;

/** The lean client of the target's dialect. */
function clientFor(target: Target, agent: Agent): LeanClient {
  if (target.dialect === 'rest') return new LeanRestClient(target, agent);
  if (target.dialect === 'a2a') return new LeanA2aClient(target, agent);
  return new LeanMcpClient(target, agent);
}

/**
 * The load generator, a child process of the bench (forked with IPC) so that
 * its CPU is charged to no system under test. It opens `concurrency` clients,
 * each looping tools/call back to back; it warms up until told to measure,
 * measures for the given time, reports, then ends its sessions and exits.
 */
function send(report: LoadReport): void {
  process.send!(report);
}

/** Sends a report and waits for the parent's next message. */
function exchange<T>(report: LoadReport): Promise<T> {
  return new Promise((resolve) => {
    process.once('message', (message: T) => resolve(message));
    send(report);
  });
}

async function run(plan: LoadPlan): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: plan.concurrency, maxFreeSockets: plan.concurrency });
  const clients = Array.from({ length: plan.concurrency }, () => clientFor(plan.target, agent));
  for (const client of clients) await client.initialize();

  let measuring = false;
  let stopping = false;
  let recorder = new LatencyRecorder();
  let errors = 0;
  let errorKinds: Record<string, number> = {};

  let callEnds: [string, number][] = [];
  const runId = Math.random().toString(36).slice(2, 8);
  const text = typeof plan.args.text === 'string' ? plan.args.text : undefined;

  const loop = async (client: LeanClient, index: number) => {
    let seq = 0;
    while (!stopping) {
      let args = plan.args;
      let expect = plan.expectText;
      let tag: string | undefined;
      if (plan.tagText && text !== undefined) {
        tag = `${runId}.${index.toString(36)}.${(seq++).toString(36)}`;
        const prefix = `#${tag} `;
        args = { ...plan.args, text: prefix + text.slice(prefix.length) };
        expect = args.text as string;
      }
      const started = performance.now();
      let failure: string | undefined;
      try {
        failure = await client.callTool(plan.tool, args, expect);
      } catch (error) {
        failure = (error as Error).message;
      }
      if (!measuring) continue;
      const ended = performance.now();
      recorder.add(ended - started);
      if (!failure && tag !== undefined && plan.recordCalls) callEnds.push([tag, performance.timeOrigin + ended]);
      if (failure) {
        errors++;
        if (Object.keys(errorKinds).length < 5 || failure in errorKinds)
          errorKinds[failure] = (errorKinds[failure] ?? 0) + 1;
      }
    }
  };
  const loops = clients.map((client, index) => loop(client, index));

  await new Promise((resolve) => setTimeout(resolve, plan.warmupMs));
  const go = await exchange<LoadGo>({ type: 'warm' });
  recorder = new LatencyRecorder();
  errors = 0;
  errorKinds = {};
  callEnds = [];
  measuring = true;
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, go.durationMs));
  stopping = true;
  await Promise.all(loops);
  const ended = performance.now();
  const elapsedMs = ended - started;
  const cpu = process.cpuUsage(cpuStart);

  const result: LoadResult = {
    calls: recorder.count,
    errors,
    errorKinds,
    elapsedMs,
    endedAtMs: performance.timeOrigin + ended,
    latencyMs: recorder.summary(),
    loadGenCpuMs: (cpu.user + cpu.system) / 1000,
    callEnds: plan.recordCalls ? callEnds : undefined,
  };
  // The sessions stay open until the parent has sampled the processes (supergateway ends a child per session).
  await exchange<LoadClose>({ type: 'done', result });
  await Promise.all(clients.map((c) => c.close()));
  agent.destroy();
  send({ type: 'closed' });
  process.disconnect();
}

process.once('message', (plan: LoadPlan) => {
  run(plan).catch((error: Error) => {
    send({ type: 'failed', message: error.message });
    process.disconnect();
  });
});
