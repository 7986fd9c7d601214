import type { BenchConfig } from '../config';
import type { MachineFloor } from '../floor/machine-floor';
import type { Measurement } from '../measure';
import type { Machine } from './machine';
import { fixed } from './table';

/**
 * docs/performance.md's current figures: the newest run of `npm run bench`,
 * written by the bench itself between two markers (`writeCurrentFigures` in
 * main.ts), beside the run's whole JSON in docs/bench/current.json. The page
 * shows one run only; the history of dated runs stays in docs/benchmarks.md.
 * A test renders the JSON again and compares it with the page, so the table
 * is never edited by hand.
 */
export interface BenchRun {
  date: string;
  machine: Machine;
  config: BenchConfig;
  floor?: MachineFloor;
  results: Measurement[];
}

export const CURRENT_BEGIN = '<!-- bench-current:begin (written by npm run bench) -->';
export const CURRENT_END = '<!-- bench-current:end -->';

/** The peers: (a) is compared with them (the stack's calls/s over theirs); the stack's variants the other way round. */
const PEERS = new Set(['sdk-stateless', 'sdk-stateful', 'mcp-proxy', 'supergateway']);

const DEFAULTS: Record<string, string> = {
  BENCH_SECONDS: '10',
  BENCH_PRIME_SECONDS: '5',
  BENCH_WARMUP_SECONDS: '2',
  BENCH_CONCURRENCY: '1,16,64',
  BENCH_TEXT_BYTES: '300',
};

/** The command that measures the same systems with the same knobs. */
export function reproduceCommand(config: BenchConfig, allSystems: readonly string[]): string {
  const knobs: Record<string, string> = {
    BENCH_SECONDS: String(config.seconds),
    BENCH_PRIME_SECONDS: String(config.primeSeconds),
    BENCH_WARMUP_SECONDS: String(config.warmupSeconds),
    BENCH_CONCURRENCY: config.concurrency.join(','),
    BENCH_TEXT_BYTES: String(config.textBytes),
  };
  const set = Object.entries(knobs)
    .filter(([name, value]) => DEFAULTS[name] !== value)
    .map(([name, value]) => `${name}=${value}`);
  const everything = allSystems.filter((id) => id !== 'stack-r3');
  const sameSystems =
    config.systems.length === everything.length && everything.every((id) => config.systems.includes(id as never));
  if (!sameSystems) set.unshift(`BENCH_SYSTEMS=${config.systems.join(',')}`);
  return [...set, 'npm run bench'].join(' ');
}

/** The stack's calls/s against this system's, at the same concurrency: how a reader compares them. */
function against(m: Measurement, stack: Measurement | undefined): string {
  if (m.system === 'stack' || !stack?.callsPerSecond || !m.callsPerSecond) return '';
  return PEERS.has(m.system)
    ? `(a) ${(stack.callsPerSecond / m.callsPerSecond).toFixed(2)}x this`
    : `${(m.callsPerSecond / stack.callsPerSecond).toFixed(2)}x (a)`;
}

/** The block between the markers, markers included. */
export function currentFigures(run: BenchRun, allSystems: readonly string[]): string {
  const { machine, floor, results } = run;
  const at = run.date.replace('T', ' ').replace(/:\d\d\.\d+Z$/, ' UTC');
  const stackAt = (c: number) => results.find((m) => m.system === 'stack' && m.concurrency === c);
  const busiest = Math.max(0, ...results.map((m) => m.otherCores ?? 0));
  const lines = [
    CURRENT_BEGIN,
    `Measured ${at} by \`${reproduceCommand(run.config, allSystems)}\` on ${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGb} GB, Node ${machine.node}, ${machine.natsServer}, PostgreSQL ${machine.postgresql}; everything, the load generator included, on the same cores. ${run.config.seconds} s per point after ${run.config.warmupSeconds} s of warm-up, each system primed ${run.config.primeSeconds} s first.`,
    '',
    floor
      ? `The machine's floor this hour: (a)'s critical path with no application work (1 HTTP exchange, 2 NATS round trips, 2 commits) took ${fixed(floor.pathMs, 2)} ms.`
      : 'The machine floor was not measured (it is, when the run includes `stack`).',
    `The rest of the machine was busy with at most ${fixed(busiest)} cores during a measurement${busiest > 0.05 ? ' (not quiet: figures disturbed)' : ''}.`,
    '',
    '| system | clients | calls/s | p50 ms | p99 ms | errors | CPU ms per call | against (a) |',
    '|---|---|---|---|---|---|---|---|',
    ...results.map(
      (m) =>
        `| ${m.label} | ${m.concurrency} | ${fixed(m.callsPerSecond, 0)} | ${fixed(m.latencyMs.p50)} | ${fixed(m.latencyMs.p99)} | ${m.errors} | ${fixed(m.cpuMsPerCall, 3)} | ${against(m, stackAt(m.concurrency))} |`,
    ),
  ];
  const rounded = results.filter((m) => m.rounds);
  if (rounded.length) {
    lines.push(
      '',
      `${[...new Set(rounded.map((m) => m.label))].join('; ')}: one stack, measured in turn, ${rounded[0].rounds!.length} rounds at each concurrency, the order rotated every round (a webhook system's webhook added before its window and removed after); each row above is its round with the median calls/s. Every round's calls/s and CPU ms per call, in round order:`,
      '',
      ...rounded.map(
        (m) =>
          `- ${m.label} at ${m.concurrency} clients: ${m.rounds!.map((r) => fixed(r, 0)).join(', ')}` +
          (m.roundsCpuMsPerCall ? ` calls/s; ${m.roundsCpuMsPerCall.map((c) => fixed(c, 3)).join(', ')} ms/call` : ''),
      ),
    );
  }
  const one = stackAt(1);
  if (one && floor) {
    lines.push(
      '',
      `At 1 client (a)'s p50 is ${fixed(one.latencyMs.p50)} ms, ${(one.latencyMs.p50 / floor.pathMs).toFixed(2)}x the floor.`,
    );
  }
  lines.push(CURRENT_END);
  return lines.join('\n');
}

/** `doc` with its block replaced by `block`; an error when the markers are missing or repeated. */
export function replaceCurrentFigures(doc: string, block: string): string {
  const begin = doc.indexOf(CURRENT_BEGIN);
  const end = doc.indexOf(CURRENT_END);
  if (begin < 0 || end < begin || doc.indexOf(CURRENT_BEGIN, begin + 1) >= 0)
    throw new Error(`expected exactly one ${CURRENT_BEGIN} … ${CURRENT_END} block`);
  return doc.slice(0, begin) + block + doc.slice(end + CURRENT_END.length);
}

/** The block as it stands in `doc`, or undefined. */
export function currentBlockOf(doc: string): string | undefined {
  const begin = doc.indexOf(CURRENT_BEGIN);
  const end = doc.indexOf(CURRENT_END);
  return begin < 0 || end < begin ? undefined : doc.slice(begin, end + CURRENT_END.length);
}
