import { readFileSync } from 'node:fs';
import { CLOCK_TICKS } from './proc-table';

/** The machine's CPU counters (first line of /proc/stat), in ms. */
export interface MachineCpu {
  busyMs: number;
  stealMs: number;
}

export function machineCpu(): MachineCpu {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  // cpu user nice system idle iowait irq softirq steal guest guest_nice
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  const toMs = (ticks: number) => (ticks * 1000) / CLOCK_TICKS;
  return { busyMs: toMs(user + nice + system + irq + softirq), stealMs: toMs(steal ?? 0) };
}
