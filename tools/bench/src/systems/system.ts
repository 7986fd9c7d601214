import type { SystemId } from '../config';
import type { Target } from '../load/mcp-http';
import type { ProcessGroup } from '../proc/sampler';
import type { OutboxState } from '../webhooks/outbox';
import type { Arrival } from '../webhooks/protocol';

/** The webhook of a "stack + 1 webhook" system, as the bench watches it. */
export interface WebhookProbe {
  receiver: 'live' | 'dead';
  url: string;
  /** What the receiver got since the last collect (the dead receiver: nothing, ever). */
  collect(): Promise<Arrival[]>;
  /** The outbox rows of the system's database, by status. */
  outbox(): Promise<OutboxState>;
  /** The live receiver's process (not the system's: its CPU is read apart). */
  receiverPid?: number;
}

/** A system under test, running: where to send load and which processes to charge. */
export interface RunningSystem {
  id: SystemId | 'external';
  label: string;
  target: Target;
  /** Its processes, by part (each part's descendants are found at every sample). */
  groups: ProcessGroup[];
  /** Apps whose Prometheus /metrics carry mcpgw_bus_* and mcpgw_sql_* (the stack only). */
  metrics: { name: string; url: string }[];
  /** The stack with one webhook: its receiver and outbox. */
  webhook?: WebhookProbe;
  stop(): Promise<void>;
}

/** The tool and arguments every system is called with. */
export const TOOL = 'echo';
