import type { MachineFloor } from '../floor/machine-floor';
import type { Measurement } from '../measure';
import { fixed, ratio, table } from './table';

const PEERS = ['sdk-stateless', 'sdk-stateful', 'mcp-proxy', 'supergateway'] as const;
const find = (all: Measurement[], system: string, concurrency: number) =>
  all.find((m) => m.system === system && m.concurrency === concurrency);
const stackOf = (all: Measurement[], c: number) => find(all, 'stack', c) ?? find(all, 'external', c);

function mainTable(rows: Measurement[]): string {
  return table(
    ['system', 'calls/s', 'p50 ms', 'p90 ms', 'p99 ms', 'errors', 'CPU ms/call', 'RSS MB start->end'],
    rows.map((m) => [
      m.label,
      fixed(m.callsPerSecond, 0),
      fixed(m.latencyMs.p50),
      fixed(m.latencyMs.p90),
      fixed(m.latencyMs.p99),
      String(m.errors),
      fixed(m.cpuMsPerCall, 3),
      m.rssStartMb === undefined ? 'n/a' : `${fixed(m.rssStartMb, 0)}->${fixed(m.rssEndMb, 0)}`,
    ]),
  );
}

function processLines(m: Measurement): string[] {
  const lines = m.groups.map((g) => {
    const count =
      g.processes.start === g.processes.end ? `${g.processes.end}` : `${g.processes.start}->${g.processes.end}`;
    return `    ${g.name.padEnd(28)} ${fixed(g.cpuMsPerCall, 3).padStart(7)} ms/call   RSS ${fixed(g.rssStartMb, 0)}->${fixed(g.rssEndMb, 0)} MB   (${count} process${g.processes.end === 1 ? '' : 'es'})`;
  });
  lines.push(`    ${'load generator (for scale)'.padEnd(28)} ${fixed(m.loadGenCpuMsPerCall, 3).padStart(7)} ms/call`);
  const busy = (m.otherCores ?? 0) > 0.05 || m.stealCores > 0.05;
  lines.push(
    `    rest of the machine: ${fixed(m.otherCores)} cores busy, steal ${fixed(m.stealCores)} cores, load average ${m.loadAverage}${busy ? '  <- NOT QUIET: figures disturbed' : ''}`,
  );
  if (m.costs) {
    const c = m.costs;
    lines.push(
      `    per call: NATS messages out ${fixed(c.natsOutPerCall)} / in ${fixed(c.natsInPerCall)}; SQL statements ${fixed(c.sqlStatementsPerCall)}, commits ${fixed(c.sqlCommitsPerCall)}`,
    );
    const families = Object.entries(c.natsByFamily).map(([family, n]) => `${family} ${n.toFixed(2)}`);
    if (families.length) lines.push(`    NATS by direction and family, per call: ${families.join(', ')}`);
  }
  if (m.errors)
    lines.push(
      `    errors: ${Object.entries(m.errorKinds)
        .map(([kind, n]) => `${kind} x${n}`)
        .join(', ')}`,
    );
  return lines;
}

function ratios(all: Measurement[], concurrency: number): string | undefined {
  const stack = stackOf(all, concurrency);
  const rows = PEERS.map((peer) => find(all, peer, concurrency))
    .filter((m): m is Measurement => !!m)
    .map((m) => [
      m.label,
      ratio(stack?.callsPerSecond, m.callsPerSecond),
      ratio(stack?.latencyMs.p50, m.latencyMs.p50),
      ratio(stack?.cpuMsPerCall, m.cpuMsPerCall),
    ]);
  if (!stack || !rows.length) return undefined;
  return table(['(a) relative to', 'calls/s', 'p50', 'CPU/call'], rows);
}

/** The scaled-out stack against the single replica, at the same concurrency. */
function replicas(all: Measurement[]): string | undefined {
  const scaled = all.find((m) => m.system === 'stack-2x2');
  const single = scaled && find(all, 'stack', scaled.concurrency);
  if (!scaled) return undefined;
  return `2 gateways + 2 message services at ${scaled.concurrency} clients: ${fixed(scaled.callsPerSecond, 0)} calls/s = ${ratio(scaled.callsPerSecond, single?.callsPerSecond)} the single replica (${fixed(single?.callsPerSecond, 0)} calls/s); target >= 0.9x`;
}

/** The issue's targets, each with the measured figure. */
function targets(all: Measurement[]): string | undefined {
  const at64 = stackOf(all, 64);
  const at1 = stackOf(all, 1);
  const checks: [string, boolean | undefined, string][] = [];
  const vs = (peer: string, min: number) => {
    const other = find(all, peer, 64);
    if (at64 && other)
      checks.push([
        `64 clients: (a) >= ${min}x ${other.label}`,
        at64.callsPerSecond >= min * other.callsPerSecond,
        ratio(at64.callsPerSecond, other.callsPerSecond),
      ]);
  };
  vs('sdk-stateless', 1);
  vs('mcp-proxy', 1);
  vs('supergateway', 1);
  vs('sdk-stateful', 0.5);
  if (at64) {
    checks.push(['64 clients: zero errors', at64.errors === 0, String(at64.errors)]);
    checks.push(['64 clients: p99 <= 50 ms', at64.latencyMs.p99 <= 50, `${fixed(at64.latencyMs.p99)} ms`]);
    if (at64.cpuMsPerCall !== undefined)
      checks.push([
        '64 clients: CPU per call of (a), all processes, <= 0.6 ms',
        at64.cpuMsPerCall <= 0.6,
        `${fixed(at64.cpuMsPerCall, 3)} ms`,
      ]);
  }
  if (at1) checks.push(['1 client: p50 <= 1.5 ms', at1.latencyMs.p50 <= 1.5, `${fixed(at1.latencyMs.p50)} ms`]);
  const scaled = all.find((m) => m.system === 'stack-2x2');
  const single = scaled && find(all, 'stack', scaled.concurrency);
  if (scaled && single)
    checks.push([
      `${scaled.concurrency} clients: 2x2 replicas >= 0.9x one`,
      scaled.callsPerSecond >= 0.9 * single.callsPerSecond,
      ratio(scaled.callsPerSecond, single.callsPerSecond),
    ]);
  if (!checks.length) return undefined;
  return table(
    ['target', 'met', 'measured'],
    checks.map(([what, ok, value]) => [what, ok ? 'yes' : 'NO', value]),
  );
}

function floorLines(floor: MachineFloor): string[] {
  return [
    'Machine floor (1 client, sequential round trips between two processes, p50, no application work):',
    `  HTTP ${fixed(floor.httpMs, 3)} ms, NATS request ${fixed(floor.natsMs, 3)} ms, PostgreSQL one-row insert + commit ${fixed(floor.commitMs, 3)} ms`,
    `  (a)'s critical path of these alone (1 HTTP + 2 NATS + 2 commits): ${fixed(floor.pathMs, 2)} ms`,
  ];
}

/** The whole report, as printed at the end of a run. */
export function render(all: Measurement[], floor?: MachineFloor): string {
  const out: string[] = [];
  for (const concurrency of [...new Set(all.map((m) => m.concurrency))].sort((a, b) => a - b)) {
    const rows = all.filter((m) => m.concurrency === concurrency);
    out.push(
      '',
      `== ${concurrency} client${concurrency === 1 ? '' : 's'} ==`,
      mainTable(rows),
      '',
      'CPU and RSS by process:',
    );
    for (const m of rows) out.push(`  ${m.label}`, ...processLines(m));
    const r = ratios(all, concurrency);
    if (r) out.push('', r);
  }
  const rep = replicas(all);
  if (rep) out.push('', rep);
  if (floor) out.push('', ...floorLines(floor));
  const t = targets(all);
  if (t) out.push('', 'Targets:', t);
  return out.join('\n');
}
