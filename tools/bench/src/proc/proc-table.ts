import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** One line of /proc/<pid>/stat, the fields the bench needs. */
export interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  /** utime + stime, in clock ticks. */
  cpuTicks: number;
  /** Start time after boot, in ticks: with the pid, it names a process uniquely. */
  startTime: number;
}

/** Clock ticks per second (`getconf CLK_TCK`, normally 100). */
export const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

export function readStat(pid: number): ProcStat | undefined {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // gone
  }
  // comm is in parentheses and may hold spaces: the fields after the last ')' start at field 3.
  const close = raw.lastIndexOf(')');
  const comm = raw.slice(raw.indexOf('(') + 1, close);
  const fields = raw.slice(close + 2).split(' ');
  const field = (n: number) => Number(fields[n - 3]);
  return { pid, ppid: field(4), comm, cpuTicks: field(14) + field(15), startTime: field(22) };
}

/** VmRSS in kB (0 for a kernel thread or a process that is gone). */
export function readRssKb(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** Every process on the machine, by pid. */
export function processTable(): Map<number, ProcStat> {
  const table = new Map<number, ProcStat>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) table.set(stat.pid, stat);
  }
  return table;
}

/** The roots and all their descendants (supergateway's per-session children, a shell's node). */
export function withDescendants(table: Map<number, ProcStat>, roots: number[]): number[] {
  const children = new Map<number, number[]>();
  for (const stat of table.values()) {
    const list = children.get(stat.ppid) ?? [];
    list.push(stat.pid);
    children.set(stat.ppid, list);
  }
  const found = new Set<number>();
  const visit = (pid: number) => {
    if (found.has(pid) || !table.has(pid)) return;
    found.add(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  roots.forEach(visit);
  return [...found];
}

/** Processes whose comm is `name` and whose parent's is not: the postmaster, nats-server. */
export function topProcessesNamed(table: Map<number, ProcStat>, name: string): number[] {
  return [...table.values()].filter((s) => s.comm === name && table.get(s.ppid)?.comm !== name).map((s) => s.pid);
}
