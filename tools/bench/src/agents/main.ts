import { fixed } from '../report/table';
import { runFleet, type Latencies } from './fleet';

/**
 * `npm run bench:agents`: a thousand agents (BENCH_AGENTS) in one process
 * against one stack (one gateway, one message service, its own nats-server
 * with auth on): the registration storm, every agent's tools/list and first
 * call, then BENCH_AGENT_CLIENTS callers spread over all agents for
 * BENCH_SECONDS; memory of each process before and after. Prints a summary
 * and the figures as JSON (docs/scaling.md has the recorded runs). Asserts nothing.
 */
async function main(): Promise<void> {
  const agents = Number(process.env.BENCH_AGENTS ?? 1000);
  const clients = Number(process.env.BENCH_AGENT_CLIENTS ?? 32);
  const seconds = Number(process.env.BENCH_SECONDS ?? 10);
  const figures = await runFleet({ agents, clients, seconds, log: (line) => process.stderr.write(`${line}\n`) });
  const row = (name: string, l: Latencies) =>
    `${name.padEnd(22)} ${String(l.count).padStart(6)} ok ${String(l.errors).padStart(5)} failed   p50 ${fixed(l.p50)} ms   p99 ${fixed(l.p99)} ms   max ${fixed(l.max)} ms`;
  const lines = [
    `${figures.serving} of ${figures.agents} agents serving ${figures.startAllMs} ms after the host started` +
      (figures.failures.length ? ` (first failures: ${figures.failures.join('; ')})` : ''),
    `inbox consumers: ${figures.inboxConsumers}`,
    row('tools/list, each agent', figures.toolsList),
    row('first call, each agent', figures.firstCalls),
    `${row(`${clients} clients, spread`, figures.spread)}   ${fixed(figures.spread.callsPerSecond, 0)} calls/s`,
    'resident memory (MiB): before -> with the agents',
    ...Object.entries(figures.memoryMiB).map(
      ([name, { before, after }]) =>
        `  ${name.padEnd(20)} ${fixed(before, 0).padStart(6)} -> ${fixed(after, 0).padStart(6)}` +
        (before ? `   (+${fixed(((after - before) * 1024) / figures.agents, 1)} KiB per agent)` : ''),
    ),
  ];
  process.stderr.write(`${lines.join('\n')}\n`);
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`bench:agents failed: ${error.stack ?? error.message}\n`);
  process.exit(1);
});
