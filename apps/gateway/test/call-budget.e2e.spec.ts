import {
  busTotal,
  connectMcp,
  counterDelta,
  scrapeAll,
  startTestStack,
  type CallCounters,
  type McpConnection,
  type TestStack,
} from '@mcpgw/devstack';
import { GatewayActivity, QuotaGossip } from '@mcpgw/contracts';
import { Client } from 'pg';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditSettings } from '../src/config/audit.env';
import { CALL_BUDGET, callTraffic } from './support/call-budget';

/**
 * What one tools/call costs on the bus and in PostgreSQL, counted by the apps
 * themselves (/metrics). Counts are deterministic, so this holds the speed of
 * the call path without a timed test: a change that adds a hop or a commit
 * fails here. Pull requests of the pods' fetch loop are background work, not
 * per call, and are left out.
 */
const BUDGET = CALL_BUDGET;
const CALLS = 40;
/** Background traffic a run may see besides the calls (pull expiries, heartbeats). */
const SLACK = 4;
/**
 * Background statements a run may see besides the calls: the gateways reload API
 * keys, grants and webhook subscriptions and renew stream leases on timers, a
 * statement each every few seconds (one fell inside a slow CI run's window).
 * A per-call statement more would be CALLS more, far past this.
 */
const SQL_SLACK = 4;

describe('the cost of one tools/call', () => {
  let env: TestStack;
  let mcp: McpConnection;
  let processUrls: string[];

  beforeAll(async () => {
    env = await startTestStack();
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
    processUrls = env.stack.processes.map((p) => p.managementUrl!);
    // Warm the caches (catalogue, session) so the count is the steady state.
    for (let i = 0; i < 5; i++) await mcp.client.callTool({ name: 'echo', arguments: { text: 'warm' } });
  });

  afterAll(async () => {
    await mcp?.close();
    await env?.stop();
  });

  async function measure(run: () => Promise<void>): Promise<CallCounters & { seconds: number }> {
    const before = await scrapeAll(processUrls);
    const started = Date.now();
    await run();
    const seconds = (Date.now() - started) / 1000;
    return { ...counterDelta(before, await scrapeAll(processUrls)), seconds };
  }

  /**
   * The audit trail is written off the call path, one statement per gateway per
   * AUDIT_FLUSH_INTERVAL_MS however many calls ended (audit/README.md): held by
   * its own count, like the gossip, and left out of the per-call statements.
   */
  function expectAuditPerInterval(spent: CallCounters & { seconds: number }): void {
    const interval = new AuditSettings().AUDIT_FLUSH_INTERVAL_MS;
    expect(spent.auditWrites, 'audit writes').toBeLessThanOrEqual(
      env.gatewayUrls.length * (Math.ceil((spent.seconds * 1000) / interval) + 1),
    );
  }

  /**
   * The quota gossip and the calls' activity are each a message per gateway per second
   * (quotas/README.md, admin-api/live/README.md), never one per call.
   */
  function expectGossipPerSecond(spent: CallCounters & { seconds: number }): void {
    for (const family of [QuotaGossip.family, GatewayActivity.family]) {
      const sent = spent.bus.get(`out ${family}`) ?? 0;
      expect(sent, family).toBeLessThanOrEqual(env.gatewayUrls.length * (Math.ceil(spent.seconds) + 1));
    }
  }

  it(`stays within ${BUDGET.published} messages published, ${BUDGET.delivered} delivered and ${BUDGET.sqlCommits} commits per call`, async () => {
    const spent = await measure(async () => {
      for (let i = 0; i < CALLS; i++) {
        const result = await mcp.client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });
        expect(result.isError).toBeFalsy();
      }
    });
    console.log(
      `per call: ${[...spent.bus].map(([family, n]) => `${family} ${(n / CALLS).toFixed(2)}`).join(', ')}; ` +
        `sql ${spent.sqlStatements / CALLS} statements, ${spent.sqlCommits / CALLS} commits ` +
        `(of them ${spent.auditWrites} audit writes in ${spent.seconds.toFixed(1)} s)`,
    );
    expect(callTraffic(spent, 'out')).toBeLessThanOrEqual(BUDGET.published * CALLS + SLACK);
    expect(callTraffic(spent, 'in')).toBeLessThanOrEqual(BUDGET.delivered * CALLS + SLACK);
    expect(spent.sqlStatements - spent.auditWrites).toBeLessThanOrEqual(BUDGET.sqlStatements * CALLS + SQL_SLACK);
    expect(spent.sqlCommits - spent.auditWrites).toBeLessThanOrEqual(BUDGET.sqlCommits * CALLS + SQL_SLACK);
    expectGossipPerSecond(spent);
    expectAuditPerInterval(spent);
    // The trail is on: the calls were written.
    expect(spent.auditWrites).toBeGreaterThan(0);
    // The counters count: a call that reached the agent shows up on the bus.
    expect(busTotal(spent, 'in')).toBeGreaterThanOrEqual(CALLS);
  });

  it('starts every service once: one LISTEN connection per gateway', async () => {
    // Nest's hybrid apps (HTTP + bus) can run the start-up hooks twice: two listeners, two
    // subscriptions, every message handled twice. The counts above would double; this says why.
    const db = new Client({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'mcpgw-listener'`,
      );
      expect(rows[0].n).toBe(env.gatewayUrls.length);
    } finally {
      await db.end();
    }
  });

  it('group-commits concurrent calls: fewer commits than inserts', async () => {
    const clients = await Promise.all(Array.from({ length: 4 }, () => connectMcp(env.mcpUrl(), env.apiKey)));
    try {
      const perClient = CALLS / clients.length;
      const spent = await measure(async () => {
        await Promise.all(
          clients.flatMap((client) =>
            Array.from({ length: perClient }, (_, i) =>
              client.client.callTool({ name: 'echo', arguments: { text: `at once ${i}` } }),
            ),
          ),
        );
      });
      console.log(`${CALLS} calls at once: ${spent.sqlStatements} statements, ${spent.sqlCommits} commits`);
      // Sequentially every call is 2 commits; at once, messages and replies share them.
      expect(spent.sqlCommits - spent.auditWrites).toBeLessThanOrEqual(1.5 * CALLS);
      expect(callTraffic(spent, 'out')).toBeLessThanOrEqual(BUDGET.published * CALLS + SLACK);
      expectGossipPerSecond(spent);
      expectAuditPerInterval(spent);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  });

  it('group-commits the idempotency records of concurrent keyed calls: a few statements, not two per call', async () => {
    const clients = await Promise.all(Array.from({ length: 4 }, () => connectMcp(env.mcpUrl(), env.apiKey)));
    // Each burst after a second of quiet: the key's quota allows 100 calls a second.
    const atOnce = async (args: (client: number, i: number) => Record<string, unknown>) => {
      await delay(1_100);
      return measure(async () => {
        await Promise.all(
          clients.flatMap((client, c) =>
            Array.from({ length: CALLS / clients.length }, (_, i) =>
              client.client.callTool({ name: 'echo', arguments: args(c, i) }),
            ),
          ),
        );
      });
    };
    try {
      const run = Date.now();
      const plain = await atOnce((c, i) => ({ text: `plain ${c}.${i}` }));
      const keyed = await atOnce((c, i) => ({ text: `keyed ${c}.${i}`, idempotency_key: `budget-${run}-${c}-${i}` }));
      const extra = keyed.sqlStatements - keyed.auditWrites - (plain.sqlStatements - plain.auditWrites);
      console.log(`${CALLS} keyed calls at once: ${extra} statements more than ${CALLS} plain ones`);
      // A claim and a completion per call, each its own statement, would be 2 x CALLS more.
      expect(extra).toBeLessThanOrEqual(CALLS / 2);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  });
});
