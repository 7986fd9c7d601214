import { InvalidRequestError } from '@mcpgw/contracts';
import type { AuditKind, ChainedEntry } from '../../audit/audit-record';
import type { AuditFilter, AuditStore } from '../../audit/audit.store';

/**
 * The audit trail for the operator (../../audit/README.md), once for the admin
 * CLI (`audit list|export|verify`) and the management API (its audit route).
 */

export const AUDIT_MAX_LIMIT = 1_000;
const KINDS: readonly AuditKind[] = ['tool_call', 'admin_action', 'auth_failure', 'tool_change'];

/** The filters as given (flags, query parameters), checked. */
export interface AuditQuery {
  kind?: string;
  caller?: string;
  agent?: string;
  tool?: string;
  outcome?: string;
  since?: string;
  until?: string;
  limit?: string | number;
  /** `next` of the page before. */
  before?: string;
}

export interface AuditPage {
  items: ChainedEntry[];
  /** Pass as `before` for the next (older) page; null: none. */
  next: string | null;
}

export function auditFilter(query: AuditQuery, defaultLimit = 50): AuditFilter {
  if (query.kind !== undefined && !(KINDS as readonly string[]).includes(query.kind)) {
    throw new InvalidRequestError(`kind: one of ${KINDS.join(', ')}`);
  }
  const limit = query.limit === undefined || query.limit === '' ? defaultLimit : Number(query.limit);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > AUDIT_MAX_LIMIT) {
    throw new InvalidRequestError(`limit: a whole number 1 to ${AUDIT_MAX_LIMIT}`);
  }
  return {
    kind: query.kind as AuditKind | undefined,
    principal: query.caller,
    agentId: query.agent,
    tool: query.tool,
    outcome: query.outcome,
    since: time('since', query.since),
    until: time('until', query.until),
    before: cursor(query.before),
    limit,
  };
}

export async function listAudit(store: AuditStore, query: AuditQuery): Promise<AuditPage> {
  const filter = auditFilter(query);
  const items = await store.list(filter);
  const last = items.at(-1);
  return {
    items,
    next:
      items.length === filter.limit && last
        ? Buffer.from(`${last.at}|${last.chain}|${last.seq}`).toString('base64url')
        : null,
  };
}

/** Every row matching, oldest page last, as JSON lines (the CLI's `audit export --format jsonl`). */
export async function* exportAudit(store: AuditStore, query: AuditQuery): AsyncGenerator<string> {
  let before: string | undefined;
  for (;;) {
    const page = await listAudit(store, { ...query, limit: AUDIT_MAX_LIMIT, ...(before && { before }) });
    for (const item of page.items) yield JSON.stringify(item);
    if (!page.next) return;
    before = page.next;
  }
}

/** `since`/`until`: an ISO date or time, or `7d`/`12h`/`30m` ago. */
function time(name: string, value: string | undefined): Date | undefined {
  if (value === undefined || value === '') return undefined;
  const ago = /^(\d{1,6})([dhm])$/.exec(value);
  if (ago) return new Date(Date.now() - Number(ago[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000 }[ago[2] as 'd']);
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new InvalidRequestError(`${name}: an ISO 8601 date or time, or 7d, 12h, 30m`);
  return date;
}

function cursor(value: string | undefined): AuditFilter['before'] {
  if (value === undefined || value === '') return undefined;
  const [at, chain, seq] = Buffer.from(value, 'base64url').toString('utf8').split('|');
  const date = new Date(at ?? '');
  if (!chain || Number.isNaN(date.getTime()) || !/^\d{1,10}$/.test(seq ?? '')) {
    throw new InvalidRequestError('before: the `next` of the page before');
  }
  return { at: date, chain, seq: Number(seq) };
}
