import { parsePrometheus, type TestStackOptions } from '@mcpgw/devstack';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  NO_QUOTAS,
  allReady,
  clientsOf,
  expectAnsweredAfter,
  expectKeptPromises,
  runLoad,
  stackFor,
} from './support/calls-under-load';

/**
 * Faults during load (issue 10): a process dies, or nats-server crashes and
 * comes back, while
 * clients call without pause (support/calls-under-load.ts: each call's own
 * answer, run once, or a documented error; never a hang, another's answer or a
 * second run). A PostgreSQL outage is database-outage.e2e.spec.ts's.
 */

describe('kill -9 one of two agent pods during load', () => {
  const env = stackFor({ pods: 2, gatewayEnv: NO_QUOTAS, podEnv: { INBOX_ACK_WAIT_MS: '1500' } });

  it('every call gets its own answer, run once, or a documented error; the other pod takes over', async () => {
    const pods = env().stack.processes.filter((p) => p.name.startsWith('agent-pod'));
    const outcomes = await runLoad(clientsOf(env(), { workers: 16, durationMs: 5_000, delayMs: 20 }), async () => {
      await sleep(1_500);
      await pods[0].kill();
    });
    expectKeptPromises(outcomes, 'pod killed');
    // Every call after the kill was served: the load went on with one pod.
    expect(outcomes.filter((o) => o.ok).length).toBeGreaterThan(outcomes.length * 0.9);
  });
});

describe('kill -9 a gateway mid-call during load (two gateways, idempotency keys)', () => {
  const env = stackFor({ gateways: 2, gatewayEnv: NO_QUOTAS });

  it("retries with the same key on the other gateway get the call's one result: no second run", async () => {
    const first = env().stack.serving(env().gatewayUrls[0]);
    let alive = [...env().gatewayUrls];
    const load = {
      ...clientsOf(env(), { workers: 16, durationMs: 5_000, delayMs: 200, idempotent: true }),
      urls: () => alive,
    };
    const outcomes = await runLoad(load, async () => {
      await sleep(1_500);
      await first.kill();
      alive = [env().gatewayUrls[1]];
    });
    expectKeptPromises(outcomes, 'gateway killed');
    // Calls were cut by the kill and retried, and the retries were answered from the one run.
    const retried = outcomes.filter((o) => o.retries > 0);
    expect(retried.length).toBeGreaterThan(0);
    expect(retried.every((o) => o.ok && o.count === 1)).toBe(true);
  });
});

/** Short wait slices: a gateway whose wait was lost re-posts (and finds the stored reply) quickly. */
const QUICK_RECOVERY: TestStackOptions = {
  gatewayEnv: { CALL_WAIT_SLICE_MS: '1000', ...NO_QUOTAS },
  podEnv: { INBOX_ACK_WAIT_MS: '1500' },
};

describe('kill -9 a message service replica during load (two replicas)', () => {
  const env = stackFor(QUICK_RECOVERY, (started) => started.stack.startMessageService());

  it('calls held by the dead replica are answered through the other, each run once', async () => {
    const services = env().stack.processes.filter((p) => p.name.startsWith('message-service'));
    const outcomes = await runLoad(clientsOf(env(), { workers: 16, durationMs: 5_000, delayMs: 50 }), async () => {
      await sleep(1_500);
      await services[0].kill();
    });
    expectKeptPromises(outcomes, 'message service killed');
    expect(outcomes.filter((o) => o.ok).length).toBeGreaterThan(outcomes.length * 0.9);
  });
});

describe('nats-server crashes and comes back during load', () => {
  const env = stackFor(QUICK_RECOVERY);

  it('the apps reconnect by themselves; calls in the gap are answered late or get documented errors, none hangs', async () => {
    const load = clientsOf(env(), { workers: 8, durationMs: 10_000, delayMs: 20 });
    const outcomes = await runLoad(load, async () => {
      await sleep(1_500);
      await env().nats!.restart(2_000);
    });
    expectKeptPromises(outcomes, 'nats-server restarted');
    // The server was gone: every app saw its connection drop and come back (its own reconnect, no restart).
    for (const proc of env().stack.processes) {
      const text = await (await fetch(`${proc.managementUrl}/metrics`)).text();
      const events = parsePrometheus(text).filter((m) => m.name === 'mcpgw_nats_connection_events_total');
      const count = (event: string) => events.find((m) => m.labels.event === event)?.value ?? 0;
      expect({ app: proc.name, reconnects: count('reconnect') }).toEqual({ app: proc.name, reconnects: 1 });
    }
    // Every app is ready again, with the same processes, and calls are answered.
    await expect.poll(() => allReady(env().stack), { timeout: 20_000 }).toBe(true);
    expect(env().stack.processes.every((p) => p.running)).toBe(true);
    await expectAnsweredAfter(load, 'after-nats');
    // The load went on after the restart: the last calls of the run were answered.
    expect(outcomes.slice(-8).every((o) => o.ok)).toBe(true);
  }, 120_000);
});
