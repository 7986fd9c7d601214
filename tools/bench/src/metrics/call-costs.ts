import { total, totalsBy, type Series } from './prometheus';

/** NATS messages and SQL work per call, from the apps' counters before and after a window. */
export interface CallCosts {
  natsOutPerCall?: number;
  natsInPerCall?: number;
  /** Per `direction family`, per call. */
  natsByFamily: Record<string, number>;
  sqlStatementsPerCall?: number;
  sqlCommitsPerCall?: number;
}

const BUS = 'mcpgw_bus_messages_total';

export function callCosts(before: Map<string, Series[]>, after: Map<string, Series[]>, calls: number): CallCosts {
  const perCall = (name: string, where?: (labels: Record<string, string>) => boolean) => {
    const end = total(after, name, where);
    if (end === undefined || calls === 0) return undefined;
    return (end - (total(before, name, where) ?? 0)) / calls;
  };
  const familyKey = (labels: Record<string, string>) => `${labels.direction ?? '?'} ${labels.family ?? '?'}`;
  const start = totalsBy(before, BUS, familyKey);
  const natsByFamily: Record<string, number> = {};
  for (const [family, end] of [...totalsBy(after, BUS, familyKey)].sort()) {
    const delta = (end - (start.get(family) ?? 0)) / Math.max(calls, 1);
    if (delta > 0) natsByFamily[family] = delta;
  }
  return {
    natsOutPerCall: perCall(BUS, (l) => l.direction === 'out'),
    natsInPerCall: perCall(BUS, (l) => l.direction === 'in'),
    natsByFamily,
    sqlStatementsPerCall: perCall('mcpgw_sql_statements_total'),
    sqlCommitsPerCall: perCall('mcpgw_sql_commits_total'),
  };
}
