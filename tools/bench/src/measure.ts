import { readFileSync } from 'node:fs';
import type { BenchConfig } from './config';
import { realisticText } from './config';
import { callCosts, type CallCosts } from './metrics/call-costs';
import { scrape } from './metrics/prometheus';
import type { LoadResult } from './load/protocol';
import { runLoad } from './load/run-load';
import { machineCpu } from './proc/machine-cpu';
import { CLOCK_TICKS, readStat } from './proc/proc-table';
import { sampleGroups, usageBetween } from './proc/sampler';
import { TOOL, type RunningSystem, type WebhookProbe } from './systems';
import { awaitDeliveries, deliveryFigures, type WebhookFigures } from './webhooks/deliveries';

export interface GroupFigures {
  name: string;
  cpuMsPerCall: number;
  rssStartMb: number;
  rssEndMb: number;
  processes: { start: number; end: number };
}

/** Everything measured for one system at one concurrency. */
export interface Measurement {
  system: string;
  label: string;
  concurrency: number;
  seconds: number;
  calls: number;
  callsPerSecond: number;
  errors: number;
  errorKinds: Record<string, number>;
  latencyMs: LoadResult['latencyMs'];
  /** Summed over every process of the system; undefined when it has none we can see. */
  cpuMsPerCall?: number;
  rssStartMb?: number;
  rssEndMb?: number;
  groups: GroupFigures[];
  loadGenCpuMsPerCall: number;
  /**
   * CPU the rest of the machine spent during the window (busy time from /proc/stat minus
   * the system's and the load generator's), in cores: anything above ~0.05 means the
   * figures were taken on a busy machine. Steal is what the hypervisor took.
   */
  otherCores?: number;
  stealCores: number;
  loadAverage: string;
  costs?: CallCosts;
  /** "stack + 1 webhook" systems: what the webhook did for the window's calls. */
  webhook?: WebhookFigures;
  /** The live webhook receiver's CPU per call in the window: the customer's side, not in `cpuMsPerCall`. */
  receiverCpuMsPerCall?: number;
  /**
   * Surfaces measured in turn on one stack (surfaces.ts): the calls/s of every round, in order.
   * This measurement is the round with the median calls/s.
   */
  rounds?: number[];
  /** The same rounds' CPU per call (`cpuMsPerCall`), in order. */
  roundsCpuMsPerCall?: (number | undefined)[];
}

const MB = 1024;

/** Priming runs at this many clients whatever is measured after: the load that warms the call path fastest. */
export const PRIME_CLIENTS = 64;

/**
 * Load at PRIME_CLIENTS for `config.primeSeconds`, measured by nobody. A
 * Node.js process runs its call path in V8's interpreter and baseline tiers
 * until each function has run often enough to be optimized: at 1 client
 * (~100 calls/s through the stack) the 2 s warm-up is ~200 calls, not
 * enough, and the figure measured JIT warm-up rather than latency. Every
 * system is primed the same way before its first measurement.
 */
export async function prime(system: RunningSystem, config: BenchConfig): Promise<void> {
  if (config.primeSeconds === 0) return;
  await runLoad(echoLoad(system, PRIME_CLIENTS, config.primeSeconds, config), 1, () => Promise.resolve());
}

/** `concurrency` clients calling echo with the run's text, after `warmupSeconds`. */
function echoLoad(system: RunningSystem, concurrency: number, warmupSeconds: number, config: BenchConfig) {
  const text = realisticText(config.textBytes);
  return {
    target: system.target,
    concurrency,
    warmupMs: warmupSeconds * 1000,
    tool: TOOL,
    args: { text },
    expectText: text,
    // Every system gets the same tagged texts; only the webhook systems need the calls back.
    tagText: true,
    recordCalls: !!system.webhook,
  };
}

/** After the window: waits (bounded) for the deliveries of its calls, matches them, reads the outbox. */
async function webhookFigures(probe: WebhookProbe, result: LoadResult): Promise<WebhookFigures> {
  const callEnds = result.callEnds ?? [];
  // Nothing can reach a receiver that does not exist: no wait for the dead one.
  const { arrivals, waitedMs } =
    probe.receiver === 'live'
      ? await awaitDeliveries(() => probe.collect(), new Set(callEnds.map(([tag]) => tag)))
      : { arrivals: [], waitedMs: 0 };
  const figures = deliveryFigures(probe.receiver, callEnds, arrivals, result.endedAtMs, waitedMs);
  try {
    figures.outbox = await probe.outbox();
  } catch (error) {
    figures.outboxError = (error as Error).message;
  }
  return figures;
}

export async function measure(system: RunningSystem, concurrency: number, config: BenchConfig): Promise<Measurement> {
  const sample = async () => ({
    metrics: await scrape(system.metrics),
    procs: sampleGroups(system.groups),
    machine: machineCpu(),
    receiverTicks: system.webhook?.receiverPid ? readStat(system.webhook.receiverPid)?.cpuTicks : undefined,
  });
  await system.webhook?.collect(); // what earlier loads caused is not this window's
  const { result, before, after } = await runLoad(
    echoLoad(system, concurrency, config.warmupSeconds, config),
    config.seconds * 1000,
    sample,
  );
  const calls = Math.max(result.calls, 1);
  const groups = usageBetween(before.procs, after.procs).map((u) => ({
    name: u.name,
    cpuMsPerCall: u.cpuMs / calls,
    rssStartMb: u.rssStartKb / MB,
    rssEndMb: u.rssEndKb / MB,
    processes: u.processes,
  }));
  const seen = groups.length > 0;
  const sum = (f: (g: GroupFigures) => number) => (seen ? groups.reduce((s, g) => s + f(g), 0) : undefined);
  const windowMs = result.elapsedMs;
  const systemCpuMs = groups.reduce((s, g) => s + g.cpuMsPerCall * calls, 0);
  const busyMs = after.machine.busyMs - before.machine.busyMs;
  const receiverMs =
    before.receiverTicks !== undefined && after.receiverTicks !== undefined
      ? ((after.receiverTicks - before.receiverTicks) * 1000) / CLOCK_TICKS
      : undefined;
  return {
    system: system.id,
    label: system.label,
    concurrency,
    seconds: result.elapsedMs / 1000,
    calls: result.calls,
    callsPerSecond: (result.calls * 1000) / result.elapsedMs,
    errors: result.errors,
    errorKinds: result.errorKinds,
    latencyMs: result.latencyMs,
    cpuMsPerCall: sum((g) => g.cpuMsPerCall),
    rssStartMb: sum((g) => g.rssStartMb),
    rssEndMb: sum((g) => g.rssEndMb),
    groups,
    loadGenCpuMsPerCall: result.loadGenCpuMs / calls,
    otherCores: seen
      ? Math.max(0, busyMs - systemCpuMs - result.loadGenCpuMs - (receiverMs ?? 0)) / windowMs
      : undefined,
    stealCores: (after.machine.stealMs - before.machine.stealMs) / windowMs,
    loadAverage: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    costs: system.metrics.length ? callCosts(before.metrics, after.metrics, result.calls) : undefined,
    webhook: system.webhook ? await webhookFigures(system.webhook, result) : undefined,
    receiverCpuMsPerCall: receiverMs === undefined ? undefined : receiverMs / calls,
  };
}
