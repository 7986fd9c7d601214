import type { BenchConfig, SystemId } from './config';
import { measure, prime, type Measurement } from './measure';
import { startSurfaces, type Variant } from './systems/stack';

/**
 * The systems that are one stack called another way (another surface, or with
 * a webhook on the agent): measured in turn, on one stack.
 */
export const SURFACES: readonly ({ id: SystemId } & Variant)[] = [
  { id: 'stack', dialect: 'mcp' },
  { id: 'stack-rest', dialect: 'rest' },
  { id: 'stack-a2a', dialect: 'a2a' },
  { id: 'stack-webhook-live', dialect: 'mcp', webhook: 'live' },
  { id: 'stack-webhook-dead', dialect: 'mcp', webhook: 'dead' },
];

/**
 * MCP surface A, REST, A2A and MCP with a webhook to a live or a dead receiver
 * on one running stack, measured in turn: at each concurrency, `surfaceRounds`
 * rounds of one window per system, the order rotated every round (no system
 * always follows the same one). Before each window (and its priming) the
 * agent's webhook is switched to what the system wants (none, live or dead).
 * Each system's figure is its round with the median calls/s, with every
 * round's calls/s kept.
 *
 * Why: the ratios to (a) are what issues 38, 39 and 42 set targets for, and
 * this VM's speed drifts by 10-20% over minutes. Measured as separate systems a
 * few minutes apart, the ratio carried that drift (REST's ran from 0.78x to
 * 1.10x of MCP's in one afternoon); in turn on the same processes, the same
 * database and the same hour, it carries only what each way of calling costs.
 * What is shared: the database's background work (autovacuum of a window's
 * rows) falls in whichever window runs then, and a dead receiver's outcomes
 * written quiet in its window are fanned out to nobody at the next poll.
 */
export async function measureSurfaces(
  ids: SystemId[],
  config: BenchConfig,
  report: (m: Measurement) => void,
): Promise<Measurement[]> {
  const chosen = SURFACES.filter((surface) => ids.includes(surface.id));
  const systems = await startSurfaces(chosen);
  try {
    for (const system of systems) {
      await system.enter();
      await prime(system, config);
    }
    const measured: Measurement[] = [];
    for (const concurrency of config.concurrency) {
      const rounds = systems.map(() => [] as Measurement[]);
      for (let round = 0; round < (config.surfaceRounds ?? 1); round++) {
        for (let k = 0; k < systems.length; k++) {
          const i = (k + round) % systems.length;
          await systems[i].enter();
          const m = await measure(systems[i], concurrency, config);
          rounds[i].push(m);
          report(m);
        }
      }
      measured.push(...rounds.map(medianRound));
    }
    return measured;
  } finally {
    await systems[0].stop();
  }
}

/** The round with the median calls/s (the lower middle of an even count), carrying every round's calls/s and CPU per call. */
export function medianRound(rounds: Measurement[]): Measurement {
  const sorted = [...rounds].sort((a, b) => a.callsPerSecond - b.callsPerSecond);
  const median = sorted[Math.floor((sorted.length - 1) / 2)];
  return rounds.length > 1
    ? {
        ...median,
        rounds: rounds.map((m) => m.callsPerSecond),
        roundsCpuMsPerCall: rounds.map((m) => m.cpuMsPerCall),
      }
    : median;
}
