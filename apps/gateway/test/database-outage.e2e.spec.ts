import { parsePrometheus, type Stack, type TestStack } from '@mcpgw/devstack';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { describe, expect, it } from 'vitest';
import {
  CALL_TIMEOUT_MS,
  NO_QUOTAS,
  allReady,
  clientsOf,
  expectKeptPromises,
  readiness,
  runLoad,
  serviceGapMs,
  stackFor,
  watchCounterRuns,
  type Outcome,
} from './support/calls-under-load';

/**
 * A PostgreSQL outage that callers do not notice (issue 45; libs/persistence/README.md,
 * "When the database is away"). 64 clients call without pause, half `echo`, half the
 * `counter` skill with a key of their own (also each call's idempotency key), while the stack's own PostgreSQL is stopped
 * for 10 s and started again. Every call must be answered within its deadline, none
 * with -32603, and no counter key may run twice. The same load rides out a failover to
 * a promoted standby (DATABASE_URL naming both) and a hung server (SIGSTOP).
 * `npm run test:failover` runs the long versions: 30 s outages, calls with a 60 s deadline.
 */

const OUTAGE_MS = Number(process.env.DB_OUTAGE_TEST_MS ?? 10_000);
const CLIENTS = 64;

interface ReadyBody {
  checks: Record<string, string>;
}

/** What an outage must leave: own answers, run once, in time; no internal error at all. */
function expectRiddenOut(outcomes: Outcome[], label: string, runs: ReturnType<typeof watchCounterRuns>['runs']) {
  expectKeptPromises(outcomes, label, runs);
  const internal = outcomes.filter((o) => o.code === -32603);
  expect(internal.map((o) => `${o.nonce}: ${o.message}`)).toEqual([]);
  // A call may end as a timeout only once its own deadline has passed.
  const early = outcomes.filter((o) => !o.ok && o.ms < CALL_TIMEOUT_MS);
  expect(early.map((o) => `${o.nonce}: ${o.code} ${o.message} after ${o.ms} ms`)).toEqual([]);
  const failed = outcomes.filter((o) => !o.ok).length;
  console.log(`${label}: ${failed} timeouts, longest gap between answers ${serviceGapMs(outcomes)} ms`);
}

/** A tools/call of `counter` on surface B with a RuntimeGrant: its HTTP status. */
async function grantCall(gatewayUrl: string, grant: string): Promise<number> {
  const response = await fetch(`${gatewayUrl}/workspaces/demo/agents/demo-agent/mcp/http`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${grant}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'outage',
      method: 'tools/call',
      params: { name: 'counter', arguments: { key: `grant-${Date.now()}` } },
    }),
  });
  return response.status;
}

/** One metric of the gateway and the message service (the apps with a database), by app. */
async function ofDatabaseApps(stack: Stack, metric: string): Promise<Record<string, number>> {
  const values: Record<string, number> = {};
  for (const proc of stack.processes.filter((p) => !p.name.startsWith('agent-pod'))) {
    const text = await (await fetch(`${proc.managementUrl}/metrics`)).text();
    values[proc.name] = parsePrometheus(text).find((m) => m.name === metric)?.value ?? 0;
  }
  return values;
}

const heldTotals = (stack: Stack) => ofDatabaseApps(stack, 'mcpgw_db_outage_held_total');
const residentMb = async (stack: Stack) =>
  Object.fromEntries(
    Object.entries(await ofDatabaseApps(stack, 'process_resident_memory_bytes')).map(([app, bytes]) => [
      app,
      Math.round(bytes / 2 ** 20),
    ]),
  );

/**
 * 64 clients calling (half echo, half counter) while `outage` runs after 2 s; then checks
 * what every outage must leave, and that the apps held work and are ready again.
 */
async function callThrough(
  env: () => TestStack,
  label: string,
  outage: (meanwhile: () => Promise<void>) => Promise<void>,
  { failsStatements = true } = {},
): Promise<void> {
  const { stack } = env();
  expect(await allReady(stack)).toBe(true);
  const grant = (
    await stack.admin<{ grant: string }>(
      'grant',
      'mint',
      '--workspace',
      'demo',
      '--agent',
      'demo-agent',
      '--task',
      'outage',
      '--tools',
      'counter',
    )
  ).grant;
  const before = await heldTotals(stack);
  const memoryBefore = await residentMb(stack);
  let memoryDuring: Record<string, number> = {};
  const watch = watchCounterRuns(stack);
  const load = clientsOf(env(), {
    workers: CLIENTS,
    durationMs: OUTAGE_MS + 12_000,
    toolOf: (w) => (w % 2 ? 'echo' : 'counter'),
    // Each call's nonce is its idempotency key too: the gateway claims and completes a record per
    // call (group-committed), so its own writes wait out the outage as well as the message service's.
    idempotent: true,
  });
  let grantCallDuringOutage: Promise<number> | undefined;
  let began = 0;
  let ended = 0;
  const outcomes = await runLoad(load, async () => {
    await sleep(2_000);
    began = Date.now();
    await outage(async () => {
      // Surface B too: its grant's revocation is looked up in the database, held until it is back.
      grantCallDuringOutage = grantCall(env().gatewayUrls[0], grant);
      memoryDuring = await residentMb(stack);
    });
    ended = Date.now();
  });
  watch.stop();
  const answered = (from: number, to: number) =>
    outcomes.filter((o) => o.ok && o.endedAt >= from && o.endedAt < to).length;
  console.log(
    `${label}: answered before ${answered(0, began)}, during ${answered(began, ended)}, ` +
      `after ${answered(ended, Infinity)} (outage ${ended - began} ms); resident MB before ` +
      `${JSON.stringify(memoryBefore)}, during ${JSON.stringify(memoryDuring)}`,
  );
  // Held work is the calls in flight, no more: memory does not grow with the outage's length.
  for (const app of Object.keys(memoryBefore)) expect(memoryDuring[app]).toBeLessThan(memoryBefore[app] + 100);
  expectRiddenOut(outcomes, label, watch.runs);
  expect(await grantCallDuringOutage).toBe(200);
  // Statements failed and were held, not passed on as errors: the message service counted what waited.
  // (A hung server fails nothing: its statements just take longer.)
  const held = await heldTotals(stack);
  if (failsStatements) expect(held['message-service-1']).toBeGreaterThan(before['message-service-1']);
  // Ready again by itself, with the same processes.
  await expect.poll(() => allReady(stack), { timeout: 20_000 }).toBe(true);
  expect(stack.processes.every((p) => p.running)).toBe(true);
}

/** The pods log each counter run (watchCounterRuns); the rest only what goes wrong. */
const QUIET = {
  // Held work waits at most DB_OUTAGE_HOLD_MS (30 s by default): the long runs' outages are longer.
  env: { LOG_LEVEL: 'warn', DB_OUTAGE_HOLD_MS: String(Math.max(30_000, 2 * OUTAGE_MS)) },
  podEnv: { LOG_LEVEL: 'info' },
  gatewayEnv: NO_QUOTAS,
};

describe('PostgreSQL stopped and started again under 64 clients', () => {
  const env = stackFor({ ownPostgres: true, ...QUIET });

  it('every call is answered in time, none with -32603, no counter key runs twice; /ready says so meanwhile', async () => {
    const postgres = env().postgres!;
    let readyDuringOutage: Record<string, number> = {};
    let databaseCheck: string | undefined;
    await callThrough(env, `PostgreSQL stopped for ${OUTAGE_MS} ms`, async (meanwhile) => {
      await postgres.stop();
      await sleep(OUTAGE_MS / 2);
      readyDuringOutage = await readiness(env().stack);
      const gateway = env().stack.processes.find((p) => p.name === 'gateway-1')!;
      databaseCheck = ((await (await fetch(`${gateway.managementUrl}/ready`)).json()) as ReadyBody).checks.database;
      await meanwhile();
      await sleep(OUTAGE_MS / 2);
      await postgres.start();
    });
    // The outage was real: every app with a database said so, the pod (none) stayed ready.
    expect(readyDuringOutage).toMatchObject({ 'gateway-1': 503, 'message-service-1': 503, 'agent-pod-1': 200 });
    expect(databaseCheck).toBe('unavailable');
  }, 180_000);

  it('a hung server (SIGSTOP: connections hang instead of failing) is waited out the same way', async () => {
    const postgres = env().postgres!;
    await callThrough(
      env,
      `PostgreSQL hung for ${OUTAGE_MS} ms`,
      async (meanwhile) => {
        await postgres.pause();
        await sleep(OUTAGE_MS / 2);
        await meanwhile();
        await sleep(OUTAGE_MS / 2);
        await postgres.resume();
      },
      { failsStatements: false },
    );
  }, 180_000);
});

describe('a failover: the primary stops, the standby is promoted', () => {
  const env = stackFor({ replicatedPostgres: true, ...QUIET });

  it('calls ride it out, and the stack serves from the new primary without a restart', async () => {
    const { primary, standby, promote } = env().replicated!;
    await callThrough(env, `failover after ${OUTAGE_MS} ms`, async (meanwhile) => {
      // A clean stop: the primary sends the standby all it has before it goes (no commit lost).
      await primary.stop('fast');
      await sleep(OUTAGE_MS / 2);
      await meanwhile();
      await sleep(OUTAGE_MS / 2);
      await promote();
    });
    // Served from the standby, now the primary: the old primary is still down.
    const client = new Client({ connectionString: standby.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ recovering: boolean }>('SELECT pg_is_in_recovery() AS recovering');
      expect(rows[0].recovering).toBe(false);
    } finally {
      await client.end();
    }
  }, 180_000);
});
