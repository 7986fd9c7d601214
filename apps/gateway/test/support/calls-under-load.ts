import { startTestStack, type Stack, type TestStack, type TestStackOptions } from '@mcpgw/devstack';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect } from 'vitest';

/**
 * Clients calling without pause while a test breaks something (faults-under-load,
 * nats-cluster). Each call carries a nonce: `counter` takes it as its key (the
 * skill counts real runs per key, so a second run of one call on the same pod shows
 * as a count of 2; on another pod only in the pods' logs, `watchCounterRuns`),
 * `echo` as its text. Outcomes allowed: the call's own answer, run once; or a
 * documented error (surface A: -32003 reply timeout, -32603 internal /
 * unreachable). Never: a hang past the call's timeout, someone else's answer, a
 * second run.
 */

const VERSION = '2026-07-28';
/** Each call's deadline (`mcpgw/timeoutMs`); the long outage runs (`npm run test:failover`) ask for more. */
export const CALL_TIMEOUT_MS = Number(process.env.LOAD_CALL_TIMEOUT_MS ?? 15_000);
const DOCUMENTED_ERRORS = new Set([-32003, -32603]);
/** The load is one key's, far above the default per-key quotas: these files are about faults, not limits. */
export const NO_QUOTAS = { QUOTA_CALLS_PER_SECOND: '0', QUOTA_CONCURRENT_CALLS: '0' };

export interface Outcome {
  nonce: string;
  tool: LoadTool;
  ok: boolean;
  count?: number;
  code?: number;
  message?: string;
  ms: number;
  /** When the outcome arrived (epoch ms). */
  endedAt: number;
  /** Connection failures seen (and retried on the next gateway) before the outcome. */
  retries: number;
}

/** `counter`: its key is the nonce, its count the runs; `echo`: its text is the nonce. */
export type LoadTool = 'counter' | 'echo';

export interface LoadOptions {
  urls: () => string[];
  apiKey: string;
  agentId: string;
  workers: number;
  durationMs: number;
  /** Send the nonce as the call's idempotency key too, and retry a broken connection with it. */
  idempotent?: boolean;
  delayMs?: number;
  /** The tool worker `w` calls (default: `counter` for all). */
  toolOf?: (w: number) => LoadTool;
}

/** Clients calling back to back for `durationMs`, each call with a fresh nonce. */
export async function runLoad(options: LoadOptions, during: () => Promise<void>): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const stopAt = Date.now() + options.durationMs;
  let next = 0;
  const worker = async (w: number) => {
    while (Date.now() < stopAt) {
      const nonce = `n-${w}-${next++}-${Math.random().toString(36).slice(2, 8)}`;
      outcomes.push(await callOnce(options, nonce, w));
    }
  };
  const load = Promise.all(Array.from({ length: options.workers }, (_, w) => worker(w)));
  await during();
  await load;
  return outcomes;
}

export async function callOnce(options: LoadOptions, nonce: string, w: number): Promise<Outcome> {
  const started = Date.now();
  const tool = options.toolOf?.(w) ?? 'counter';
  let retries = 0;
  for (;;) {
    const urls = options.urls();
    const url = urls[(w + retries) % urls.length];
    try {
      const response = await fetch(`${url}/${options.agentId}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-agent-api-key': options.apiKey,
          'mcp-protocol-version': VERSION,
          'mcp-method': 'tools/call',
          'mcp-name': tool,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: nonce,
          method: 'tools/call',
          params: {
            name: tool,
            arguments: {
              ...(tool === 'counter' ? { key: nonce } : { text: nonce }),
              ...(options.delayMs && tool === 'counter' ? { delay_ms: options.delayMs } : {}),
              ...(options.idempotent ? { idempotency_key: nonce } : {}),
            },
            _meta: {
              'io.modelcontextprotocol/protocolVersion': VERSION,
              'io.modelcontextprotocol/clientCapabilities': {},
              'io.modelcontextprotocol/clientInfo': { name: 'faults-test', version: '1.0.0' },
              'mcpgw/timeoutMs': CALL_TIMEOUT_MS,
            },
          },
        }),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS + 10_000),
      });
      const body = (await response.json()) as {
        id?: string;
        result?: { structuredContent?: { key?: string; count?: number; text?: string } };
        error?: { code: number; message: string };
      };
      const endedAt = Date.now();
      const ms = endedAt - started;
      if (body.error)
        return { nonce, tool, ok: false, code: body.error.code, message: body.error.message, ms, endedAt, retries };
      const answer = body.result?.structuredContent;
      const own = tool === 'counter' ? answer?.key === nonce : answer?.text === nonce;
      if (body.id !== nonce || !own) throw new Error(`call ${nonce} got another answer: ${JSON.stringify(body)}`);
      return { nonce, tool, ok: true, count: answer?.count, ms, endedAt, retries };
    } catch (error) {
      if ((error as Error).message.startsWith('call ')) throw error;
      // The gateway died under the request: with an idempotency key, the retry is safe.
      if (!options.idempotent || retries >= 5) {
        const endedAt = Date.now();
        return { nonce, tool, ok: false, ms: endedAt - started, endedAt, retries };
      }
      retries++;
      await sleep(100);
    }
  }
}

/** Where each `counter` key ran: the pods whose `counter run` log lines name it, in order. */
export type CounterRuns = Map<string, string[]>;

/**
 * Gathers the `counter run` lines of every agent pod of `stack` from now until `stop()`.
 * The skill's count is one pod's; these lines show a key run on two pods.
 */
export function watchCounterRuns(stack: Stack): { runs: CounterRuns; stop(): void } {
  const runs: CounterRuns = new Map();
  const pods = stack.processes.filter((p) => p.name.startsWith('agent-pod'));
  const unsubscribe = pods.map((pod) =>
    pod.onLog((line) => {
      // `counter_key`: a field named `key` is logged as [redacted] (libs/observability).
      const key = line.counter_key;
      if (line.msg !== 'counter run' || typeof key !== 'string') return;
      runs.set(key, [...(runs.get(key) ?? []), String(line.pod_id)]);
    }),
  );
  return { runs, stop: () => unsubscribe.forEach((off) => off()) };
}

/**
 * What every fault must leave: own answers run once, or documented errors, none hanging.
 * With `runs` (every pod's, `watchCounterRuns`): no `counter` key ran more than once on
 * all pods together, and each answered one was seen running (the lines are gathered at all).
 */
export function expectKeptPromises(outcomes: Outcome[], label: string, runs?: CounterRuns) {
  const failed = outcomes.filter((o) => !o.ok);
  const undocumented = failed.filter((o) => o.code === undefined || !DOCUMENTED_ERRORS.has(o.code));
  const twice = outcomes.filter((o) => o.ok && o.tool === 'counter' && o.count !== 1);
  const slowest = Math.max(...outcomes.map((o) => o.ms));
  console.log(
    `${label}: ${outcomes.length} calls, ${outcomes.length - failed.length} answered, ` +
      `${failed.length} documented errors (${[...new Set(failed.map((o) => o.code))].join(', ') || 'none'}), ` +
      `${outcomes.reduce((n, o) => n + o.retries, 0)} client retries, slowest ${slowest} ms`,
  );
  expect(undocumented.map((o) => o.nonce)).toEqual([]);
  expect(twice.map((o) => `${o.nonce} ran ${o.count} times`)).toEqual([]);
  if (runs) {
    const counted = outcomes.filter((o) => o.tool === 'counter');
    const twiceAcross = counted
      .filter((o) => (runs.get(o.nonce)?.length ?? 0) > 1)
      .map((o) => `${o.nonce} ran on ${runs.get(o.nonce)!.join(', ')}`);
    expect(twiceAcross).toEqual([]);
    expect(counted.filter((o) => o.ok && !runs.has(o.nonce)).map((o) => `${o.nonce} answered, no run seen`)).toEqual(
      [],
    );
  }
  expect(slowest).toBeLessThan(CALL_TIMEOUT_MS + 5_000);
  expect(outcomes.length).toBeGreaterThan(50);
}

/**
 * The gap in service: the longest time between two answered calls (by when their
 * answers arrived), from `from` on. A fault that stops every call shows as a gap
 * as long as the stop; calls delayed but answered shorten it.
 */
export function serviceGapMs(outcomes: Outcome[], from = 0): number {
  const answered = outcomes
    .filter((o) => o.ok && o.endedAt >= from)
    .map((o) => o.endedAt)
    .sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < answered.length; i++) gap = Math.max(gap, answered[i] - answered[i - 1]);
  return gap;
}

/** A stack for one describe block: started before its tests (within `startMs`), stopped after. */
export function stackFor(
  options: TestStackOptions,
  then?: (env: TestStack) => Promise<unknown>,
  startMs?: number,
): () => TestStack {
  let env: TestStack;
  beforeAll(async () => {
    env = await startTestStack(options);
    await then?.(env);
  }, startMs);
  afterAll(async () => {
    await env?.stop();
  });
  return () => env;
}

/** Load options for a test stack's agent, through its gateways. */
export function clientsOf(env: TestStack, load: Omit<LoadOptions, 'urls' | 'apiKey' | 'agentId'>): LoadOptions {
  return { urls: () => env.gatewayUrls, apiKey: env.apiKey, agentId: env.agentId, ...load };
}

/** One more call once the fault is over: it must be answered (retried for a while, the apps may be reconnecting). */
export async function expectAnsweredAfter(options: LoadOptions, label: string): Promise<void> {
  const after = () => callOnce({ ...options, workers: 1, durationMs: 0 }, `${label}-${Date.now()}`, 0);
  await expect.poll(async () => (await after()).ok, { timeout: 10_000, interval: 200 }).toBe(true);
}

/** /ready of every app of a stack, by name. */
export async function readiness(stack: Stack): Promise<Record<string, number>> {
  return Object.fromEntries(
    await Promise.all(
      stack.processes.map(async (p) => {
        if (!p.running) throw new Error(`${p.name} exited: ${p.stderr.slice(-1_000)}`);
        return [p.name, (await fetch(`${p.managementUrl}/ready`)).status] as const;
      }),
    ),
  );
}

export const allReady = async (stack: Stack) => Object.values(await readiness(stack)).every((status) => status === 200);
