import { freePort, startTestStack, type TestStack } from '@mcpgw/devstack';
import { join } from 'node:path';
import { processTable, topProcessesNamed } from '../proc/proc-table';
import type { ProcessGroup } from '../proc/sampler';
import { LiveReceiver } from '../webhooks/live-receiver';
import { readOutbox } from '../webhooks/outbox';
import { ChildService } from './child-service';
import type { RunningSystem, WebhookProbe } from './system';

export const STACK_ENV = {
  LOG_LEVEL: 'warn',
  DATABASE_POOL_SIZE: '20',
  INBOX_STORAGE: process.env.INBOX_STORAGE ?? 'file',
  POD_CONCURRENCY: process.env.POD_CONCURRENCY ?? '64',
  // One key drives every client: limits far above the load keep the quota checks on the path, never refusing.
  QUOTA_CONCURRENT_CALLS: '100000',
  QUOTA_CALLS_PER_SECOND: '1000000',
};

/** nats-server and PostgreSQL (the postmaster and every backend under it), shared by the whole stack. */
export function serverGroups(): ProcessGroup[] {
  const table = processTable();
  return [
    { name: 'nats-server', pids: topProcessesNamed(table, 'nats-server') },
    { name: 'postgresql', pids: topProcessesNamed(table, 'postgres') },
  ];
}

export function appGroups(stack: TestStack): ProcessGroup[] {
  return stack.stack.processes.filter((p) => p.running && p.pid).map((p) => ({ name: p.name, pids: [p.pid!] }));
}

export function appMetrics(stack: TestStack): { name: string; url: string }[] {
  return stack.stack.processes.filter((p) => p.running).map((p) => ({ name: p.name, url: p.managementUrl! }));
}

/**
 * (a) the whole stack on the real PostgreSQL and NATS: one gateway, one message service, one pod; calls with
 * sessions. With `AUDIT: 'off'`, the same without the audit trail (`stack-audit-off`: what the trail costs).
 */
export async function startStack(env: { AUDIT?: 'off' } = {}): Promise<RunningSystem> {
  const stack = await startTestStack({ env: { ...STACK_ENV, ...env } });
  const off = env.AUDIT === 'off';
  return {
    id: off ? 'stack-audit-off' : 'stack',
    label: off ? 'stack (a), audit off' : 'stack (a)',
    target: { url: stack.mcpUrl(), headers: { 'X-Agent-API-Key': stack.apiKey }, stateful: true },
    groups: [...appGroups(stack), ...serverGroups()],
    metrics: appMetrics(stack),
    stop: () => stack.stop(),
  };
}

/**
 * The same stack, called over another surface with the agent's API key, one
 * request a call (no session): `rest`, `POST /api/v1/agents/{agent_id}/invoke`
 * to echo; `a2a`, A2A's JSON-RPC `SendMessage` naming the echo skill at
 * `POST /a2a/{agent_id}`. What each dialect costs against MCP surface A on
 * the same call path.
 */
export async function startSurfaceStack(dialect: Dialect): Promise<RunningSystem> {
  const stack = await startTestStack({ env: STACK_ENV });
  return { ...surfaceOf(stack, dialect), stop: () => stack.stop() };
}

export type Dialect = 'mcp' | 'rest' | 'a2a';

/** One way of calling the stack measured in turn (../surfaces.ts): a surface, and whether the agent has a webhook then. */
export interface Variant {
  dialect: Dialect;
  webhook?: 'live' | 'dead';
}

/** A system of the stack measured in turn: `enter` sets the stack up for its window (its webhook, or none). */
export type InTurnSystem = RunningSystem & { enter(): Promise<void> };

/**
 * One stack, as (a) (MCP surface A, in a session), REST, A2A, and (a) with a
 * webhook to a live or a dead receiver, at once: the systems `stack`,
 * `stack-rest`, `stack-a2a`, `stack-webhook-live` and `stack-webhook-dead`
 * when they are measured in turn (../surfaces.ts). Before each window the
 * agent's webhook is made to match the variant (webhooks.ts). The first
 * system's `stop` stops the stack (and the receiver); the others' do nothing.
 */
export async function startSurfaces(variants: Variant[]): Promise<InTurnSystem[]> {
  const receiver = variants.some((v) => v.webhook === 'live') ? await LiveReceiver.start() : undefined;
  let stack: TestStack | undefined;
  try {
    const deadPort = await freePort();
    const allowed = {
      WEBHOOK_ALLOWED_HOSTS: [receiver?.port, deadPort]
        .filter(Boolean)
        .map((port) => `127.0.0.1:${port}`)
        .join(','),
    };
    stack = await startTestStack({ env: STACK_ENV, gatewayEnv: allowed });
    const running = stack;
    const webhook = new WebhookSwitch(stack, allowed);
    const urls = { live: `http://127.0.0.1:${receiver?.port}/hooks`, dead: `http://127.0.0.1:${deadPort}/hooks` };
    const stopAll = async () => {
      await running.stop();
      await receiver?.stop();
    };
    return variants.map((variant, i) => {
      const kind = variant.webhook;
      const probe: WebhookProbe | undefined = kind && {
        receiver: kind,
        url: urls[kind],
        collect: () => (receiver && kind === 'live' ? receiver.collect() : Promise.resolve([])),
        receiverPid: kind === 'live' ? receiver?.pid : undefined,
        outbox: () => readOutbox(running.stack.settings.databaseUrl),
      };
      const surface = kind ? webhookSurfaceOf(running, kind) : surfaceOf(running, variant.dialect);
      return {
        ...surface,
        webhook: probe,
        enter: () => webhook.set(kind && urls[kind]),
        stop: i === 0 ? stopAll : () => Promise.resolve(),
      };
    });
  } catch (error) {
    await stack?.stop();
    await receiver?.stop();
    throw error;
  }
}

/**
 * The bench agent's one webhook, switched between windows with the admin CLI,
 * as an operator would: removed (its deliveries and their attempts go with it,
 * ON DELETE CASCADE, so a dead receiver's backlog ends with its window) and
 * added anew for the next window that wants one. The gateways hear of each
 * change at once (a `webhook:<agent>` notice); the window's warm-up runs after it.
 */
class WebhookSwitch {
  private current?: { url: string; id: string };

  constructor(
    private readonly stack: TestStack,
    private readonly allowed: Record<string, string>,
  ) {}

  async set(url: string | undefined): Promise<void> {
    if (this.current?.url === url) return;
    if (this.current) {
      await this.stack.stack.adminWith(this.allowed, 'webhook', 'remove', this.current.id);
      this.current = undefined;
    }
    if (url) this.current = { url, id: await addWebhook(this.stack, this.allowed, url) };
  }
}

const WEBHOOK_EVENTS = 'tool_call.completed,tool_call.failed';

/** `admin webhook add` for the bench agent; its id. */
async function addWebhook(stack: TestStack, allowed: Record<string, string>, url: string): Promise<string> {
  const created = await stack.stack.adminWith<{ id: string }>(
    allowed,
    'webhook',
    'add',
    '--agent',
    stack.agentId,
    '--url',
    url,
    '--events',
    WEBHOOK_EVENTS,
  );
  return created.id;
}

function webhookSurfaceOf(stack: TestStack, kind: 'live' | 'dead'): Omit<RunningSystem, 'stop'> {
  return {
    ...surfaceOf(stack, 'mcp'),
    id: kind === 'live' ? 'stack-webhook-live' : 'stack-webhook-dead',
    label: `stack + 1 webhook (${kind} receiver)`,
  };
}

function surfaceOf(stack: TestStack, dialect: Dialect): Omit<RunningSystem, 'stop'> {
  const common = { groups: [...appGroups(stack), ...serverGroups()], metrics: appMetrics(stack) };
  const headers = { 'X-Agent-API-Key': stack.apiKey };
  if (dialect === 'mcp')
    return { id: 'stack', label: 'stack (a)', target: { url: stack.mcpUrl(), headers, stateful: true }, ...common };
  const path = dialect === 'rest' ? `/api/v1/agents/${stack.agentId}/invoke` : `/a2a/${stack.agentId}`;
  return {
    id: dialect === 'rest' ? 'stack-rest' : 'stack-a2a',
    label: dialect === 'rest' ? 'stack, REST invoke' : 'stack, A2A',
    target: { url: `${stack.gatewayUrls[0]}${path}`, headers, stateful: false, dialect },
    ...common,
  };
}

/**
 * (a) on a 3-node NATS cluster (auth on, loopback), the inbox stream with three
 * replicas (INBOX_REPLICAS=3): what replication costs a call, against `stack`.
 * The apps take the three URLs; each connects to one of them.
 */
export async function startClusterStack(): Promise<RunningSystem> {
  const stack = await startTestStack({ natsCluster: 3, env: { ...STACK_ENV, INBOX_REPLICAS: '3' } });
  return {
    id: 'stack-r3',
    label: 'stack R3 (a)',
    target: { url: stack.mcpUrl(), headers: { 'X-Agent-API-Key': stack.apiKey }, stateful: true },
    groups: [...appGroups(stack), ...serverGroups()],
    metrics: appMetrics(stack),
    stop: () => stack.stop(),
  };
}

/**
 * (a) with one webhook on the bench agent for tool_call.completed and
 * tool_call.failed: the same stack, settings and quotas as `startStack` (the
 * one-variant case of startSurfaces, its webhook added at once), pointing at
 * the live receiver (a process of the bench on loopback, answering 204 at once)
 * or at a loopback port where nothing listens (every attempt: connection
 * refused, then retried with backoff). The receiver is the customer's side: its
 * CPU is charged to no system, like the load generator's. A stack of its own
 * only when it is the one stack system of the run (`BENCH_SYSTEMS=stack-webhook-live`);
 * beside `stack` it is measured in turn on the same stack (startSurfaces).
 *
 * The gateway and the admin CLI must admit the loopback URL: WEBHOOK_ALLOWED_HOSTS
 * names `127.0.0.1:<port>` (an entry admits only its own port).
 */
export async function startWebhookStack(receiverKind: 'live' | 'dead'): Promise<RunningSystem> {
  const [system] = await startSurfaces([{ dialect: 'mcp', webhook: receiverKind }]);
  try {
    await system.enter();
    return system;
  } catch (error) {
    await system.stop();
    throw error;
  }
}

/** (a) scaled out: two gateways and two message services behind a round-robin TCP proxy on one port. */
export async function startScaledStack(): Promise<RunningSystem> {
  const stack = await startTestStack({ env: STACK_ENV, gateways: 2 });
  let proxy: ChildService | undefined;
  try {
    await stack.stack.startMessageService();
    const port = await freePort();
    const upstreams = stack.gatewayUrls.map((url) => new URL(url).port);
    proxy = new ChildService('round-robin proxy', process.execPath, [
      join(__dirname, 'round-robin-proxy.js'),
      String(port),
      ...upstreams,
    ]);
    await proxy.listening(port);
    const running = proxy;
    return {
      id: 'stack-2x2',
      label: 'stack 2 gw + 2 ms (a2)',
      target: {
        url: `http://127.0.0.1:${port}/${stack.agentId}/mcp`,
        headers: { 'X-Agent-API-Key': stack.apiKey },
        stateful: true,
      },
      groups: [...appGroups(stack), { name: running.name, pids: [running.pid] }, ...serverGroups()],
      metrics: appMetrics(stack),
      stop: async () => {
        await running.stop();
        await stack.stop();
      },
    };
  } catch (error) {
    await proxy?.stop();
    await stack.stop();
    throw error;
  }
}

/** MCP_URL + MCP_KEY: a gateway someone else runs; no processes to charge, no counters. */
export function externalStack(url: string, key: string): RunningSystem {
  return {
    id: 'external',
    label: `external ${url}`,
    target: { url, headers: { 'X-Agent-API-Key': key }, stateful: true },
    groups: [],
    metrics: [],
    stop: async () => undefined,
  };
}
