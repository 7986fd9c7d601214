/** One Prometheus sample: its name, labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (enough of the format for our own /metrics). */
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    // Labels end at the first `}` outside quotes: an OpenMetrics exemplar (`# {call_id="…"} v t`) may follow.
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[^"}]|"(?:[^"\\]|\\.)*")*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1]] = pair[2];
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** What a process has counted on the bus and in PostgreSQL (see /metrics). */
export interface CallCounters {
  /** `out <family>` / `in <family>` -> messages. */
  bus: Map<string, number>;
  sqlStatements: number;
  sqlCommits: number;
  /** Of the statements, those writing the audit trail: one per flush interval, not per call. */
  auditWrites: number;
}

export async function scrapeCounters(baseUrl: string): Promise<CallCounters> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (!response.ok) throw new Error(`${baseUrl}/metrics: HTTP ${response.status}`);
  const counters: CallCounters = { bus: new Map(), sqlStatements: 0, sqlCommits: 0, auditWrites: 0 };
  for (const sample of parsePrometheus(await response.text())) {
    if (sample.name === 'mcpgw_bus_messages_total') {
      const key = `${sample.labels.direction} ${sample.labels.family}`;
      counters.bus.set(key, (counters.bus.get(key) ?? 0) + sample.value);
    } else if (sample.name === 'mcpgw_sql_statements_total') counters.sqlStatements += sample.value;
    else if (sample.name === 'mcpgw_sql_commits_total') counters.sqlCommits += sample.value;
    else if (sample.name === 'mcpgw_audit_writes_total') counters.auditWrites += sample.value;
  }
  return counters;
}

/** Counters summed over several processes. */
export async function scrapeAll(baseUrls: string[]): Promise<CallCounters> {
  const total: CallCounters = { bus: new Map(), sqlStatements: 0, sqlCommits: 0, auditWrites: 0 };
  for (const counters of await Promise.all(baseUrls.map(scrapeCounters))) {
    for (const [key, value] of counters.bus) total.bus.set(key, (total.bus.get(key) ?? 0) + value);
    total.sqlStatements += counters.sqlStatements;
    total.sqlCommits += counters.sqlCommits;
    total.auditWrites += counters.auditWrites;
  }
  return total;
}

/** What happened between two scrapes. */
export function counterDelta(before: CallCounters, after: CallCounters): CallCounters {
  const bus = new Map<string, number>();
  for (const [key, value] of after.bus) {
    const delta = value - (before.bus.get(key) ?? 0);
    if (delta) bus.set(key, delta);
  }
  return {
    bus,
    sqlStatements: after.sqlStatements - before.sqlStatements,
    sqlCommits: after.sqlCommits - before.sqlCommits,
    auditWrites: after.auditWrites - before.auditWrites,
  };
}

/** Messages of one direction, summed over families (minus those named in `except`). */
export function busTotal(counters: CallCounters, direction: 'out' | 'in', except: string[] = []): number {
  let total = 0;
  for (const [key, value] of counters.bus) {
    const [dir, family] = key.split(' ');
    if (dir === direction && !except.includes(family)) total += value;
  }
  return total;
}

/** A gauge (or any metric) of one process, summed over its label sets; 0 when it has no sample yet. */
export async function scrapeMetric(baseUrl: string, name: string): Promise<number> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (!response.ok) throw new Error(`${baseUrl}/metrics: HTTP ${response.status}`);
  return parsePrometheus(await response.text())
    .filter((sample) => sample.name === name)
    .reduce((sum, sample) => sum + sample.value, 0);
}
