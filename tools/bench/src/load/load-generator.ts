import { Agent } from 'node:http';
import { LatencyRecorder } from './latency';
import { LeanMcpClient } from './mcp-http';
import type { LoadClose, LoadGo, LoadPlan, LoadReport, LoadResult } from './protocol';

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
  const clients = Array.from({ length: plan.concurrency }, () => new LeanMcpClient(plan.target, agent));
  for (const client of clients) await client.initialize();

  let measuring = false;
  let stopping = false;
  let recorder = new LatencyRecorder();
  let errors = 0;
  let errorKinds: Record<string, number> = {};

  const loop = async (client: LeanMcpClient) => {
    while (!stopping) {
      const started = performance.now();
      let failure: string | undefined;
      try {
        failure = await client.callTool(plan.tool, plan.args, plan.expectText);
      } catch (error) {
        failure = (error as Error).message;
      }
      if (!measuring) continue;
      recorder.add(performance.now() - started);
      if (failure) {
        errors++;
        if (Object.keys(errorKinds).length < 5 || failure in errorKinds)
          errorKinds[failure] = (errorKinds[failure] ?? 0) + 1;
      }
    }
  };
  const loops = clients.map(loop);

  await new Promise((resolve) => setTimeout(resolve, plan.warmupMs));
  const go = await exchange<LoadGo>({ type: 'warm' });
  recorder = new LatencyRecorder();
  errors = 0;
  errorKinds = {};
  measuring = true;
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, go.durationMs));
  stopping = true;
  await Promise.all(loops);
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuStart);

  const result: LoadResult = {
    calls: recorder.count,
    errors,
    errorKinds,
    elapsedMs,
    latencyMs: recorder.summary(),
    loadGenCpuMs: (cpu.user + cpu.system) / 1000,
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
