import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ALL_SYSTEMS, readConfig, type SystemId } from './config';
import { measureMachineFloor, type MachineFloor } from './floor/machine-floor';
import { measureWebhookFloor } from './floor/webhook-floor';
import { measure, prime, PRIME_CLIENTS, type Measurement } from './measure';
import { currentFigures, replaceCurrentFigures, type BenchRun } from './report/current-figures';
import { describeMachine } from './report/machine';
import { deliveryLine, render } from './report/print';
import { fixed } from './report/table';
import { measureSurfaces, SURFACES } from './surfaces';
import { startSystem } from './systems';

/**
 * `npm run bench`: tools/call echo (a realistic ~300-byte text) through the
 * whole stack (gateway → NATS → message service → JetStream → pod and back)
 * side by side with the bare SDK server (stateless b1, stateful b2) and two
 * npm MCP gateways fronting a stdio echo server (c), each in its own
 * processes, at 1, 16 and 64 clients; then the stack with two gateways and
 * two message services behind a round-robin proxy. Prints throughput,
 * latency, errors, CPU per call and RSS of every process, the stack's NATS
 * messages and SQL statements per call, and the ratios. Asserts nothing.
 * Knobs: see config.ts (BENCH_SECONDS, BENCH_SYSTEMS, BENCH_CONCURRENCY, BENCH_JSON, …).
 */
/** The newest run's figures, as docs/performance.md shows them. */
const CURRENT_JSON = 'docs/benchmarks/current.json';

async function main(): Promise<void> {
  const config = readConfig();
  const machine = await describeMachine();
  process.stderr.write(
    `${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGb} GB, Node ${machine.node}, ${machine.natsServer}, PostgreSQL ${machine.postgresql}\n` +
      `systems ${config.systems.join(', ')}; clients ${config.concurrency.join(', ')}; each system primed ${config.primeSeconds} s at ${PRIME_CLIENTS} clients, then ${config.warmupSeconds} s warm-up + ${config.seconds} s each; text ${config.textBytes} bytes\n`,
  );
  const results: Measurement[] = [];
  let floor: MachineFloor | undefined;
  if (config.systems.includes('stack') && !config.external) {
    floor = await measureMachineFloor();
    process.stderr.write(`machine floor: (a)'s critical path without its work ${fixed(floor.pathMs, 2)} ms\n`);
    if (config.systems.includes('stack-webhook-live')) {
      floor.webhook = await measureWebhookFloor();
      process.stderr.write(
        `webhook floor: one signed POST, sender + receiver ${fixed(floor.webhook.totalMs, 3)} ms of CPU\n`,
      );
    }
  }
  const log = (m: Measurement) => {
    process.stderr.write(
      `  ${m.label}, ${m.concurrency} clients: ${fixed(m.callsPerSecond, 0)} calls/s, p50 ${fixed(m.latencyMs.p50)} p99 ${fixed(m.latencyMs.p99)} ms, ${m.errors} errors, CPU ${fixed(m.cpuMsPerCall, 3)} ms/call\n`,
    );
    if (m.webhook) process.stderr.write(`    ${deliveryLine(m.webhook)}\n`);
  };
  // MCP, REST, A2A and the webhook systems on one stack, in turn (surfaces.ts), where more than one of them is asked for.
  const surfaces = config.external ? [] : config.systems.filter((id) => SURFACES.some((s) => s.id === id));
  for (const id of config.systems) {
    if (surfaces.length > 1 && surfaces.includes(id)) {
      if (id !== surfaces[0]) continue;
      process.stderr.write(`starting one stack for ${surfaces.join(', ')}, measured in turn…\n`);
      results.push(...(await measureSurfaces(surfaces, config, log)));
      continue;
    }
    // The scaled-out stack is compared with the single replica at the highest concurrency only.
    const levels = id === 'stack-2x2' ? [Math.max(...config.concurrency)] : config.concurrency;
    // The private stacks exist only without MCP_URL.
    if (id !== 'stack' && id.startsWith('stack') && config.external) continue;
    process.stderr.write(`starting ${id}…\n`);
    const system = await startSystem(id as SystemId, config);
    try {
      await prime(system, config);
      for (const concurrency of levels) {
        const m = await measure(system, concurrency, config);
        results.push(m);
        log(m);
      }
    } finally {
      await system.stop();
    }
  }
  console.log(render(results, floor));
  const run: BenchRun = { date: new Date().toISOString(), machine, config, floor, results };
  if (config.jsonPath) {
    writeFileSync(config.jsonPath, `${JSON.stringify(run, null, 2)}\n`);
    process.stderr.write(`figures written to ${config.jsonPath}\n`);
  }
  if (config.writeDocs) writeDocs(run);
}

/** The run becomes docs/performance.md's current figures (report/current-figures.ts); BENCH_DOCS=off keeps them. */
function writeDocs(run: BenchRun): void {
  const root = resolve(__dirname, '../../..');
  const json = resolve(root, CURRENT_JSON);
  mkdirSync(dirname(json), { recursive: true });
  writeFileSync(json, `${JSON.stringify(run, null, 2)}\n`);
  const page = resolve(root, 'docs/performance.md');
  writeFileSync(page, replaceCurrentFigures(readFileSync(page, 'utf8'), currentFigures(run, ALL_SYSTEMS)));
  process.stderr.write(
    `docs/performance.md's current figures and ${CURRENT_JSON} written (BENCH_DOCS=off to keep them)\n`,
  );
}

main().catch((error: Error) => {
  console.error(`bench failed: ${error.stack ?? error.message}`);
  process.exit(1);
});
