/**
 * Per-tool figures of the overview, computed in the page from the live feed's
 * `call` events since the page opened: calls, errors, p50 and p99 of the
 * duration. Memory is bounded: the last DURATIONS durations of each tool, at
 * most TOOLS tools (the least recently called one is dropped to make room).
 * Calls a busy replica only counted (`unlisted`) have no tool: not in here.
 */
export const DURATIONS = 1_000;
export const TOOLS = 100;

export interface ToolFigures {
  agentId: string;
  tool: string;
  calls: number;
  errors: number;
  /** The last DURATIONS durations (ms), oldest first. */
  durations: number[];
  lastAt: number;
}

export type ToolTable = Map<string, ToolFigures>;

/** A new table with one more call; the one given is left as it was (React state). */
export function addCall(
  table: ToolTable,
  call: { agent_id: string; tool: string; duration_ms: number; failed: boolean },
  at: number,
): ToolTable {
  const key = JSON.stringify([call.agent_id, call.tool]);
  const next = new Map(table);
  const seen = next.get(key);
  const durations = [...(seen?.durations ?? []), call.duration_ms].slice(-DURATIONS);
  next.delete(key);
  next.set(key, {
    agentId: call.agent_id,
    tool: call.tool,
    calls: (seen?.calls ?? 0) + 1,
    errors: (seen?.errors ?? 0) + (call.failed ? 1 : 0),
    durations,
    lastAt: at,
  });
  // A Map keeps insertion order and each call re-inserts its tool: the first is the least recent.
  while (next.size > TOOLS) next.delete(next.keys().next().value!);
  return next;
}

/** The nearest-rank percentile (0 < p ≤ 100) of `values`, or undefined when there are none. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** The table's rows, busiest tool first. */
export function rowsOf(table: ToolTable): (ToolFigures & { p50?: number; p99?: number })[] {
  return [...table.values()]
    .sort((a, b) => b.calls - a.calls || a.tool.localeCompare(b.tool))
    .map((row) => ({ ...row, p50: percentile(row.durations, 50), p99: percentile(row.durations, 99) }));
}
