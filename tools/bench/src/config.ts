/**
 * The knobs of `npm run bench`, read once from the environment.
 *
 *   BENCH_SECONDS=10            measured seconds per system and concurrency
 *   BENCH_PRIME_SECONDS=5       once per system, before its first measurement: load at 64
 *                               clients, so that V8 has optimized the call path
 *                               (0: measure a cold process, as before)
 *   BENCH_WARMUP_SECONDS=2      warm-up before each measurement
 *   BENCH_CONCURRENCY=1,16,64   simulated clients
 *   BENCH_SYSTEMS=stack,stack-audit-off,stack-rest,stack-a2a,stack-webhook-live,stack-webhook-dead,stack-2x2,stack-bridge,sdk-stateless,sdk-stateful,mcp-proxy,supergateway
 *                               (also, by name only: stack-r3, the stack on a 3-node NATS cluster, INBOX_REPLICAS=3)
 *   BENCH_TEXT_BYTES=300        size of the echoed text (the "realistic body")
 *   BENCH_SURFACE_ROUNDS=3      stack, stack-rest, stack-a2a, stack-webhook-live and stack-webhook-dead
 *                               run on one stack, measured in turn this many rounds at each
 *                               concurrency (surfaces.ts); 1: one window each
 *   BENCH_JSON=path             also write every figure as JSON
 *   BENCH_DOCS=off              leave docs/performance.md's current figures and docs/benchmarks/current.json
 *                               as they are (by default a run writes its figures there: report/current-figures.ts)
 *   MCP_URL + MCP_KEY           measure a running gateway instead of a private stack (no CPU figures)
 */
export const ALL_SYSTEMS = [
  'stack',
  'stack-audit-off',
  'stack-rest',
  'stack-a2a',
  'stack-webhook-live',
  'stack-webhook-dead',
  'stack-2x2',
  'stack-r3',
  'stack-bridge',
  'sdk-stateless',
  'sdk-stateful',
  'mcp-proxy',
  'supergateway',
] as const;
export type SystemId = (typeof ALL_SYSTEMS)[number];
/** What `npm run bench` measures unless told: every system but the cluster (three more nats-servers). */
const DEFAULT_SYSTEMS = ALL_SYSTEMS.filter((id) => id !== 'stack-r3');

export interface BenchConfig {
  seconds: number;
  primeSeconds: number;
  warmupSeconds: number;
  concurrency: number[];
  systems: SystemId[];
  textBytes: number;
  /** Rounds of the surfaces measured in turn on one stack (surfaces.ts); absent in runs from before them: 1. */
  surfaceRounds?: number;
  jsonPath?: string;
  /** Write the run's figures into docs/performance.md and docs/benchmarks/current.json. */
  writeDocs: boolean;
  external?: { url: string; key: string };
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = Number(env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
}

function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = positive(env, name, fallback);
  if (!Number.isInteger(value)) throw new Error(`${name} must be a positive integer`);
  return value;
}

function nonNegative(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = Number(env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be zero or a positive number`);
  return value;
}

export function readConfig(env = process.env): BenchConfig {
  const concurrency = (env.BENCH_CONCURRENCY ?? '1,16,64').split(',').map((c) => Number(c.trim()));
  if (concurrency.some((c) => !Number.isInteger(c) || c < 1))
    throw new Error('BENCH_CONCURRENCY: a comma list of positive integers');
  const systems = (env.BENCH_SYSTEMS ?? DEFAULT_SYSTEMS.join(',')).split(',').map((s) => s.trim()) as SystemId[];
  const unknown = systems.filter((s) => !ALL_SYSTEMS.includes(s));
  if (unknown.length)
    throw new Error(`BENCH_SYSTEMS: unknown ${unknown.join(', ')} (known: ${ALL_SYSTEMS.join(', ')})`);
  return {
    seconds: positive(env, 'BENCH_SECONDS', 10),
    primeSeconds: nonNegative(env, 'BENCH_PRIME_SECONDS', 5),
    warmupSeconds: positive(env, 'BENCH_WARMUP_SECONDS', 2),
    concurrency,
    systems,
    textBytes: positive(env, 'BENCH_TEXT_BYTES', 300),
    surfaceRounds: positiveInteger(env, 'BENCH_SURFACE_ROUNDS', 3),
    jsonPath: env.BENCH_JSON || undefined,
    writeDocs: env.BENCH_DOCS !== 'off' && !(env.MCP_URL && env.MCP_KEY),
    external: env.MCP_URL && env.MCP_KEY ? { url: env.MCP_URL, key: env.MCP_KEY } : undefined,
  };
}

/** The echoed text: prose of `bytes` ASCII characters, so the body looks like a real tool call. */
export function realisticText(bytes: number): string {
  const prose =
    'Summarise the open incidents for the payments cluster since Monday, group them by service, ' +
    'and list for each the first alert, the current owner, the customer impact and the next step. ' +
    'Flag anything that breaches the 30 minute response objective and link the runbook sections. ';
  let text = '';
  while (text.length < bytes) text += prose;
  return text.slice(0, bytes);
}
