import type { MachineFloor } from '../floor/machine-floor';
import type { Measurement } from '../measure';
import { ON_TIME_MS, type WebhookFigures } from '../webhooks/deliveries';
import { fixed, ratio, table } from './table';

const PEERS = ['sdk-stateless', 'sdk-stateful', 'mcp-proxy', 'supergateway'] as const;
const find = (all: Measurement[], system: string, concurrency: number) =>
  all.find((m) => m.system === system && m.concurrency === concurrency);
const stackOf = (all: Measurement[], c: number) => find(all, 'stack', c) ?? find(all, 'external', c);
const WEBHOOK_SYSTEMS = ['stack-webhook-live', 'stack-webhook-dead'] as const;
/** Issue 42's targets at the top level: a dead receiver keeps this share of the stack's calls/s… */
const WEBHOOK_MIN_RATIO = 0.9;
/** …and a live one costs the stack at most this much CPU per call (the receiver's own CPU apart). */
const WEBHOOK_MAX_CPU_RATIO = 1.25;

/** What one webhook system's deliveries were for one window, in a line. */
export function deliveryLine(w: WebhookFigures): string {
  const parts = [`deliveries: ${w.delivered} of ${w.calls} calls`];
  if (w.receiver === 'dead') parts[0] += ' (nothing listens: every attempt refused)';
  else {
    parts.push(`${w.onTime} within ${ON_TIME_MS / 1000} s`);
    if (w.lagMs)
      parts.push(
        `lag p50 ${fixed(w.lagMs.p50)} / p99 ${fixed(w.lagMs.p99)} / max ${fixed(w.lagMs.max)} ms (receiver arrival - call end at the load generator)`,
      );
    parts.push(`${w.afterWindow} first arrived after the window (waited ${fixed(w.waitedSeconds, 1)} s)`);
    parts.push(`${w.missing} never arrived`);
    if (w.duplicates) parts.push(`${w.duplicates} duplicates`);
    if (w.otherDeliveries) parts.push(`${w.otherDeliveries} deliveries of warm-up and earlier calls meanwhile`);
  }
  if (w.outbox)
    parts.push(
      `outbox now: ${w.outbox.pending} pending, ${w.outbox.delivered} delivered, ${w.outbox.failed} failed, ${w.outbox.attempts} attempts (since the webhook was added)`,
    );
  if (w.outboxError) parts.push(`outbox unreadable: ${w.outboxError}`);
  return parts.join('; ');
}

/** The audit trail's cost: the stack (audit on, its default) against the same stack with AUDIT=off. */
function auditCost(all: Measurement[], concurrency: number): string | undefined {
  const on = find(all, 'stack', concurrency);
  const off = find(all, 'stack-audit-off', concurrency);
  if (!on || !off) return undefined;
  return `audit trail: stack (a) with the audit on ${fixed(on.callsPerSecond, 0)} calls/s, ${fixed(on.cpuMsPerCall, 3)} ms CPU/call = ${ratio(on.callsPerSecond, off.callsPerSecond)} calls/s and ${ratio(on.cpuMsPerCall, off.cpuMsPerCall)} CPU/call of the same with AUDIT=off (${fixed(off.callsPerSecond, 0)} calls/s); target >= 0.95x calls/s`;
}

/** Each webhook system against the stack at one concurrency, and what its deliveries were. */
function webhooks(all: Measurement[], concurrency: number): string[] {
  const stack = find(all, 'stack', concurrency);
  const rows = WEBHOOK_SYSTEMS.map((id) => find(all, id, concurrency)).filter((m): m is Measurement => !!m);
  if (!rows.length) return [];
  return [
    '',
    table(
      ['relative to stack (a)', 'calls/s', 'p50', 'p99', 'CPU/call'],
      rows.map((m) => [
        m.label,
        ratio(m.callsPerSecond, stack?.callsPerSecond),
        ratio(m.latencyMs.p50, stack?.latencyMs.p50),
        ratio(m.latencyMs.p99, stack?.latencyMs.p99),
        ratio(m.cpuMsPerCall, stack?.cpuMsPerCall),
      ]),
    ),
    '',
    "Webhook deliveries of the window's calls:",
    ...rows.flatMap((m) => [
      `  ${m.label}: the stack's CPU ${fixed(m.cpuMsPerCall, 3)} ms/call (${ratio(m.cpuMsPerCall, stack?.cpuMsPerCall)} stack (a)'s)` +
        (m.receiverCpuMsPerCall === undefined
          ? ''
          : `; the receiver's own ${fixed(m.receiverCpuMsPerCall, 3)} ms/call, apart (not in the stack's)`),
      ...(m.webhook ? [`    ${deliveryLine(m.webhook)}`] : []),
      ...roundByRound(m, stack),
    ]),
  ];
}

/** Measured in turn on one stack (surfaces.ts): each round's calls/s and CPU per call against `reference`'s of the same round. */
function roundRatios(
  m: Measurement,
  reference: Measurement | undefined,
): { calls: string[]; cpu: string[] } | undefined {
  if (!m.rounds || !reference?.rounds || m.rounds.length !== reference.rounds.length) return undefined;
  return {
    calls: m.rounds.map((r, i) => ratio(r, reference.rounds![i])),
    cpu: (m.roundsCpuMsPerCall ?? []).map((c, i) => ratio(c, reference.roundsCpuMsPerCall?.[i])),
  };
}

function roundByRound(m: Measurement, stack: Measurement | undefined): string[] {
  const each = roundRatios(m, stack);
  return each
    ? [
        `    round by round (${m.rounds!.length}, in turn on one stack): calls/s ${each.calls.join(', ')}; CPU/call ${each.cpu.join(', ')}`,
      ]
    : [];
}

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
  const top = 64; // the issue's level, as for (a)'s own targets
  const stackTop = find(all, 'stack', top);
  for (const id of WEBHOOK_SYSTEMS) {
    const m = find(all, id, top);
    if (!m) continue;
    if (stackTop && id === 'stack-webhook-dead')
      checks.push([
        `${top} clients: ${m.label} >= ${WEBHOOK_MIN_RATIO}x stack (a) calls/s`,
        m.callsPerSecond >= WEBHOOK_MIN_RATIO * stackTop.callsPerSecond,
        ratio(m.callsPerSecond, stackTop.callsPerSecond),
      ]);
    if (stackTop && id === 'stack-webhook-live')
      checks.push([
        `${top} clients: ${m.label}, stack CPU/call <= ${WEBHOOK_MAX_CPU_RATIO}x stack (a)'s`,
        m.cpuMsPerCall !== undefined &&
          stackTop.cpuMsPerCall !== undefined &&
          m.cpuMsPerCall <= WEBHOOK_MAX_CPU_RATIO * stackTop.cpuMsPerCall,
        `${ratio(m.cpuMsPerCall, stackTop.cpuMsPerCall)} (${fixed(m.cpuMsPerCall, 3)} against ${fixed(stackTop.cpuMsPerCall, 3)} ms)`,
      ]);
    const w = m.webhook;
    if (w?.receiver === 'live')
      checks.push([
        `${top} clients: live receiver, every delivery within ${ON_TIME_MS / 1000} s`,
        w.calls > 0 && w.onTime === w.calls,
        `${w.onTime} of ${w.calls}`,
      ]);
  }
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
    ...(floor.webhook
      ? [
          `  a webhook delivery alone (one signed POST as the gateway sends it, to the live system's receiver, ${floor.webhook.inFlight} in flight, no outcome row): CPU ${fixed(floor.webhook.senderMs, 3)} ms sending + ${fixed(floor.webhook.receiverMs, 3)} ms receiving = ${fixed(floor.webhook.totalMs, 3)} ms`,
        ]
      : []),
  ];
}

/**
 * The best the live webhook system can do here: the stack's CPU per call against that plus the
 * delivery's floor, as if the outcome row, its settle and all the rest of a webhook were free. Two
 * cores serve the calls, the load and the receiver alike, so this is a ceiling, not an estimate.
 */
function webhookCeiling(all: Measurement[], floor?: MachineFloor): string[] {
  const stack = find(all, 'stack', 64);
  const live = find(all, 'stack-webhook-live', 64);
  if (!floor?.webhook || !stack?.cpuMsPerCall || !live) return [];
  const ceiling = stack.cpuMsPerCall / (stack.cpuMsPerCall + floor.webhook.totalMs);
  return [
    `Ceiling of ${live.label} on this machine, at 64 clients: the stack's ${fixed(stack.cpuMsPerCall, 3)} ms of CPU per call against ${fixed(stack.cpuMsPerCall, 3)} + ${fixed(floor.webhook.totalMs, 3)} (the delivery alone, above) = ${fixed(ceiling, 2)}x, were every other cost of a webhook zero; measured ${ratio(live.callsPerSecond, stack.callsPerSecond)}`,
  ];
}

/** The REST invoke and A2A against MCP surface A, same stack settings, same run (issues 39 and 38). */
function surfacesAgainstMcp(all: Measurement[], concurrency: number): string[] {
  const mcp = find(all, 'stack', concurrency);
  if (!mcp) return [];
  const lines: string[] = [];
  for (const [id, name, target] of [
    ['stack-rest', 'REST invoke', 1.0],
    ['stack-a2a', 'A2A SendMessage', 0.9],
  ] as const) {
    const other = find(all, id, concurrency);
    if (!other) continue;
    lines.push(
      '',
      `${name} at ${concurrency} clients: ${fixed(other.callsPerSecond, 0)} calls/s = ${ratio(other.callsPerSecond, mcp.callsPerSecond)} MCP surface A (${fixed(mcp.callsPerSecond, 0)} calls/s); p50 ${ratio(other.latencyMs.p50, mcp.latencyMs.p50)}, CPU/call ${ratio(other.cpuMsPerCall, mcp.cpuMsPerCall)}; target >= ${fixed(target, 1)}x calls/s`,
    );
    const each = roundRatios(other, mcp);
    if (each) lines.push(`  round by round (${each.calls.length}, in turn on one stack): ${each.calls.join(', ')}`);
  }
  return lines;
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
    out.push(...surfacesAgainstMcp(all, concurrency));
    out.push(...webhooks(all, concurrency));
    const a = auditCost(all, concurrency);
    if (a) out.push('', a);
  }
  const rep = replicas(all);
  if (rep) out.push('', rep);
  if (floor) out.push('', ...floorLines(floor));
  const t = targets(all);
  if (t) out.push('', 'Targets:', t);
  const ceiling = webhookCeiling(all, floor);
  if (ceiling.length) out.push('', ...ceiling);
  return out.join('\n');
}
