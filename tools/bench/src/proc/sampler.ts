import { CLOCK_TICKS, processTable, readRssKb, withDescendants } from './proc-table';

/** A named part of a system: its root pids (descendants are included at each sample). */
export interface ProcessGroup {
  name: string;
  pids: number[];
}

/** One reading of a group: CPU ticks and RSS per process (keyed by pid:starttime). */
export interface GroupSample {
  name: string;
  processes: Map<string, { cpuTicks: number; rssKb: number }>;
}

export function sampleGroups(groups: ProcessGroup[]): GroupSample[] {
  const table = processTable();
  return groups.map((group) => {
    const processes = new Map<string, { cpuTicks: number; rssKb: number }>();
    for (const pid of withDescendants(table, group.pids)) {
      const stat = table.get(pid)!;
      processes.set(`${pid}:${stat.startTime}`, { cpuTicks: stat.cpuTicks, rssKb: readRssKb(pid) });
    }
    return { name: group.name, processes };
  });
}

/** What a group spent between two samples. */
export interface GroupUsage {
  name: string;
  processes: { start: number; end: number };
  cpuMs: number;
  rssStartKb: number;
  rssEndKb: number;
}

/**
 * CPU spent between the samples, per group. A process born in between is
 * charged its whole life; one that died in between loses what it spent after
 * the first sample (noted by the process counts).
 */
export function usageBetween(before: GroupSample[], after: GroupSample[]): GroupUsage[] {
  return after.map((end) => {
    const start = before.find((g) => g.name === end.name);
    let ticks = 0;
    for (const [key, now] of end.processes) ticks += now.cpuTicks - (start?.processes.get(key)?.cpuTicks ?? 0);
    const rss = (sample: GroupSample | undefined) =>
      [...(sample?.processes.values() ?? [])].reduce((sum, p) => sum + p.rssKb, 0);
    return {
      name: end.name,
      processes: { start: start?.processes.size ?? 0, end: end.processes.size },
      cpuMs: (ticks * 1000) / CLOCK_TICKS,
      rssStartKb: rss(start),
      rssEndKb: rss(end),
    };
  });
}
