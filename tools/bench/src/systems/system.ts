import type { SystemId } from '../config';
import type { Target } from '../load/mcp-http';
import type { ProcessGroup } from '../proc/sampler';

/** A system under test, running: where to send load and which processes to charge. */
export interface RunningSystem {
  id: SystemId | 'external';
  label: string;
  target: Target;
  /** Its processes, by part (each part's descendants are found at every sample). */
  groups: ProcessGroup[];
  /** Apps whose Prometheus /metrics carry mcpgw_bus_* and mcpgw_sql_* (the stack only). */
  metrics: { name: string; url: string }[];
  stop(): Promise<void>;
}

/** The tool and arguments every system is called with. */
export const TOOL = 'echo';
