import {
  AGENT_ID_PATTERN,
  POD_ID_PATTERN,
  PRESENCE_INTERVAL_MAX_MS,
  PRESENCE_INTERVAL_MIN_MS,
  PRESENCE_INTERVAL_MS,
} from '@mcpgw/contracts';
import { hostname } from 'node:os';

/** Settings an agent takes from its options, else from the environment, else these defaults. */
export interface AgentSettings {
  agentId: string;
  /** The workspace the agent belongs to (`WORKSPACE_ID`, default `demo`): registration is refused for another. */
  workspaceId: string;
  /**
   * Names this instance in replies, logs and the gateway's pod records (`POD_ID`,
   * default `<hostname>-<pid>`; A-Z a-z 0-9 _ . : -, at most 200).
   */
  podId: string;
  /** `NATS_URL`, comma-separated for a cluster (default `nats://127.0.0.1:4222`). */
  natsUrl: string;
  /** `NATS_CREDS`: the agent's credentials file (`npm run admin -- agent credentials`); unset: none. */
  natsCreds?: string;
  /** `BUS_PREFIX`: the deployment's subject namespace (default `mcpgw`). */
  busPrefix: string;
  /** `INBOX_ACK_WAIT_MS` (default 30000): how long JetStream waits for a sign of life before redelivering. */
  ackWaitMs: number;
  /** `INBOX_MAX_DELIVER` (default 5): skill attempts per message. */
  maxDeliver: number;
  /** `AGENT_CONCURRENCY` (default 64): messages one instance works on at once. */
  concurrency: number;
  /** `SHUTDOWN_GRACE_MS` (default 25000): how long `stop()` lets running skills finish before handing them back. */
  shutdownGraceMs: number;
  /**
   * `PRESENCE_INTERVAL_MS` (default 15000, 100 to 600000): how often the pod tells
   * the gateway it is up; it counts as online while heard within 3 intervals.
   */
  presenceIntervalMs: number;
}

type Env = Record<string, string | undefined>;

/** The settings, checked: a wrong one stops the agent at start with its name. */
export function resolveSettings(given: Partial<AgentSettings> & { agentId: string }, env: Env): AgentSettings {
  const settings: AgentSettings = {
    agentId: given.agentId,
    workspaceId: given.workspaceId ?? env.WORKSPACE_ID ?? 'demo',
    podId: given.podId ?? env.POD_ID ?? `${hostname()}-${process.pid}`,
    natsUrl: given.natsUrl ?? env.NATS_URL ?? 'nats://127.0.0.1:4222',
    natsCreds: given.natsCreds ?? (env.NATS_CREDS || undefined),
    busPrefix: given.busPrefix ?? env.BUS_PREFIX ?? 'mcpgw',
    ackWaitMs: given.ackWaitMs ?? integer(env, 'INBOX_ACK_WAIT_MS', 30_000, 500),
    maxDeliver: given.maxDeliver ?? integer(env, 'INBOX_MAX_DELIVER', 5, 1),
    concurrency: given.concurrency ?? integer(env, 'AGENT_CONCURRENCY', 64, 1),
    shutdownGraceMs: given.shutdownGraceMs ?? integer(env, 'SHUTDOWN_GRACE_MS', 25_000, 0),
    presenceIntervalMs:
      given.presenceIntervalMs ?? integer(env, 'PRESENCE_INTERVAL_MS', PRESENCE_INTERVAL_MS, PRESENCE_INTERVAL_MIN_MS),
  };
  for (const [name, value] of [
    ['agentId', settings.agentId],
    ['workspaceId', settings.workspaceId],
  ] as const) {
    if (!AGENT_ID_PATTERN.test(value))
      throw new Error(`${name} ${JSON.stringify(value)} must match ${AGENT_ID_PATTERN}`);
  }
  if (!POD_ID_PATTERN.test(settings.podId))
    throw new Error(`podId ${JSON.stringify(settings.podId)} must match ${POD_ID_PATTERN}`);
  const interval = settings.presenceIntervalMs;
  if (!Number.isInteger(interval) || interval < PRESENCE_INTERVAL_MIN_MS || interval > PRESENCE_INTERVAL_MAX_MS)
    throw new Error(
      `PRESENCE_INTERVAL_MS must be an integer from ${PRESENCE_INTERVAL_MIN_MS} to ${PRESENCE_INTERVAL_MAX_MS}`,
    );
  if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(settings.busPrefix))
    throw new Error('BUS_PREFIX must be dot-separated subject tokens');
  return settings;
}

function integer(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer of at least ${min}`);
  return value;
}
