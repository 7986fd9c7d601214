import { parsePrometheus, type Stack } from '@mcpgw/devstack';
import { setTimeout as sleep } from 'node:timers/promises';
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
 * `counter` skill with a key of their own, while the stack's own PostgreSQL is stopped
 * for 10 s and started again. Every call must be answered within its deadline, none
 * with -32603, and no counter key may run twice. `npm run test:failover` runs the long
 * versions (longer outages, a failover to a promoted standby, a hung server).
 */

const OUTAGE_MS = Number(process.env.DB_OUTAGE_TEST_MS ?? 10_000);
const CLIENTS = 64;

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

async function heldTotals(stack: Stack): Promise<Record<string, number>> {
  const totals: Record<string, number> = {};
  for (const proc of stack.processes.filter((p) => !p.name.startsWith('agent-pod'))) {
    const text = await (await fetch(`${proc.managementUrl}/metrics`)).text();
    const held = parsePrometheus(text).find((m) => m.name === 'mcpgw_db_outage_held_total');
    totals[proc.name] = held?.value ?? 0;
  }
  return totals;
}

describe('PostgreSQL stopped for 10 s under 64 clients', () => {
  const env = stackFor({
    ownPostgres: true,
    // The pods log each counter run (watchCounterRuns); the rest only what goes wrong.
    env: { LOG_LEVEL: 'warn' },
    podEnv: { LOG_LEVEL: 'info' },
    gatewayEnv: NO_QUOTAS,
  });

  it('every call is answered in time, none with -32603, no counter key runs twice; /ready says so meanwhile', async () => {
    const { stack, postgres } = env();
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
    const watch = watchCounterRuns(stack);
    let grantCallDuringOutage: Promise<number> | undefined;
    const load = clientsOf(env(), {
      workers: CLIENTS,
      durationMs: OUTAGE_MS + 12_000,
      toolOf: (w) => (w % 2 ? 'echo' : 'counter'),
    });
    let readyDuringOutage: Record<string, number> = {};
    let stopped = 0;
    let started = 0;
    const outcomes = await runLoad(load, async () => {
      await sleep(2_000);
      await postgres!.stop();
      stopped = Date.now();
      await sleep(OUTAGE_MS / 2);
      readyDuringOutage = await readiness(stack);
      // Surface B too: its grant's revocation is looked up in the database, held until it is back.
      grantCallDuringOutage = grantCall(env().gatewayUrls[0], grant);
      await sleep(OUTAGE_MS / 2);
      await postgres!.start();
      started = Date.now();
    });
    const answered = (from: number, to: number) =>
      outcomes.filter((o) => o.ok && o.endedAt >= from && o.endedAt < to).length;
    console.log(
      `answered before the stop ${answered(0, stopped)}, during it ${answered(stopped, started)}, ` +
        `after ${answered(started, Infinity)} (down ${started - stopped} ms)`,
    );
    watch.stop();
    // The outage was real: every app with a database said so, the pod (none) stayed ready.
    expect(readyDuringOutage).toMatchObject({ 'gateway-1': 503, 'message-service-1': 503, 'agent-pod-1': 200 });
    expectRiddenOut(outcomes, `PostgreSQL stopped for ${OUTAGE_MS} ms`, watch.runs);
    expect(await grantCallDuringOutage).toBe(200);
    // Calls were held, not lost: the apps counted what waited for the database.
    const held = await heldTotals(stack);
    expect(held['message-service-1']).toBeGreaterThan(0);
    // Ready again by itself, with the same processes.
    await expect.poll(() => allReady(stack), { timeout: 20_000 }).toBe(true);
    expect(stack.processes.every((p) => p.running)).toBe(true);
  }, 120_000);
});
