import { readFileSync } from 'node:fs';
import type { Measurement } from '../measure';
import type { Machine } from './machine';

/**
 * `node tools/bench/dist/report/to-markdown.js run1.json run2.json …`: the
 * tables of docs/benchmarks.md from BENCH_JSON dumps, one column per run.
 */
interface Run {
  date: string;
  machine: Machine;
  results: Measurement[];
}

const runs: Run[] = process.argv.slice(2).map((file) => JSON.parse(readFileSync(file, 'utf8')) as Run);
const f = (n: number | undefined, digits = 0) => (n === undefined || Number.isNaN(n) ? 'n/a' : n.toFixed(digits));
const find = (run: Run, system: string, concurrency: number) =>
  run.results.find((m) => m.system === system && m.concurrency === concurrency);
const head = (first: string[]) => [
  `| ${[...first, ...runs.map((_, i) => `run ${i + 1}`)].join(' | ')} |`,
  `|${[...first, ...runs].map(() => '---').join('|')}|`,
];

function systems(): { id: string; label: string }[] {
  const seen = new Map<string, string>();
  for (const run of runs) for (const m of run.results) if (!seen.has(m.system)) seen.set(m.system, m.label);
  return [...seen].map(([id, label]) => ({ id, label }));
}
const levels = [...new Set(runs.flatMap((r) => r.results.map((m) => m.concurrency)))].sort((a, b) => a - b);

const out: string[] = [];
out.push(
  'Each cell: calls/s, then p50 / p90 / p99 ms, errors, CPU ms per call summed over every process of the system.',
  '',
);
out.push(...head(['system', 'clients']));
for (const s of systems()) {
  for (const c of levels) {
    const cells = runs.map((run) => {
      const m = find(run, s.id, c);
      return m
        ? `${f(m.callsPerSecond)}; ${f(m.latencyMs.p50, 1)} / ${f(m.latencyMs.p90, 1)} / ${f(m.latencyMs.p99, 1)}; ${m.errors} err; ${f(m.cpuMsPerCall, 2)} ms`
        : '';
    });
    if (cells.some(Boolean)) out.push(`| ${s.label} | ${c} | ${cells.join(' | ')} |`);
  }
}

const top = Math.max(...levels);
out.push('', `The stack (a) at ${top} clients, per call:`, '');
out.push(...head(['figure']));
const stackRows = new Map<string, string[]>();
runs.forEach((run, i) => {
  const m = find(run, 'stack', top);
  if (!m) return;
  const put = (k: string, v: string) => {
    if (!stackRows.has(k))
      stackRows.set(
        k,
        runs.map(() => ''),
      );
    stackRows.get(k)![i] = v;
  };
  for (const g of m.groups) put(`CPU ms: ${g.name}`, f(g.cpuMsPerCall, 3));
  put('CPU ms: all processes', f(m.cpuMsPerCall, 3));
  put('CPU ms: load generator (not in the total)', f(m.loadGenCpuMsPerCall, 3));
  put('RSS MB start -> end, all processes', `${f(m.rssStartMb)} -> ${f(m.rssEndMb)}`);
  put('NATS messages published by the apps (out)', f(m.costs?.natsOutPerCall, 2));
  put('NATS messages delivered to the apps (in)', f(m.costs?.natsInPerCall, 2));
  put('SQL statements', f(m.costs?.sqlStatementsPerCall, 2));
  put('SQL commits', f(m.costs?.sqlCommitsPerCall, 2));
  put('rest of the machine busy (cores)', f(m.otherCores, 2));
});
for (const [k, v] of stackRows) out.push(`| ${k} | ${v.join(' | ')} |`);

out.push('', `Ratios of (a) to each system at ${top} clients (calls/s), and the scaled-out stack:`, '');
out.push(...head(['(a) relative to']));
for (const s of systems().filter((x) => x.id !== 'stack')) {
  const cells = runs.map((run) => {
    const a = find(run, 'stack', top);
    const o = find(run, s.id, top);
    if (!a || !o) return '';
    if (s.id === 'stack-2x2') return `${(o.callsPerSecond / a.callsPerSecond).toFixed(2)}x (2x2 / single)`;
    if (o.webhook) return `${(o.callsPerSecond / a.callsPerSecond).toFixed(2)}x (with webhook / without)`;
    return `${(a.callsPerSecond / o.callsPerSecond).toFixed(2)}x`;
  });
  out.push(`| ${s.label} | ${cells.join(' | ')} |`);
}

const hooked = systems().filter((s) => runs.some((run) => run.results.some((m) => m.system === s.id && m.webhook)));
if (hooked.length) {
  out.push(
    '',
    "Webhook deliveries of each window's calls: delivered / calls (within 2 s); lag p50 / p99 / max ms from the end of the call at the load generator to the arrival at the receiver; never arrived; outbox pending after the wait.",
    '',
  );
  out.push(...head(['system', 'clients']));
  for (const s of hooked) {
    for (const c of levels) {
      const cells = runs.map((run) => {
        const w = find(run, s.id, c)?.webhook;
        if (!w) return '';
        const lag = w.lagMs ? `${f(w.lagMs.p50, 1)} / ${f(w.lagMs.p99, 1)} / ${f(w.lagMs.max, 1)} ms` : 'no lag';
        return `${w.delivered} / ${w.calls} (${w.onTime}); ${lag}; ${w.missing} missing; ${w.outbox?.pending ?? 'n/a'} pending`;
      });
      if (cells.some(Boolean)) out.push(`| ${s.label} | ${c} | ${cells.join(' | ')} |`);
    }
  }
}
console.log(out.join('\n'));
