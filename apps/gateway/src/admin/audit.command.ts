import { InvalidRequestError } from '@mcpgw/contracts';
import { readFileSync } from 'node:fs';
import type { Anchor } from '../audit/audit.store';
import { verifyTrail } from '../audit/audit-verify';
import type { Command } from './commands';
import { optionalFlag } from './flags';
import { exportAudit, listAudit, type AuditQuery } from './operations/audit';

const query = (flags: Record<string, string | boolean | undefined>): AuditQuery => ({
  kind: optionalFlag(flags, 'kind'),
  caller: optionalFlag(flags, 'caller'),
  agent: optionalFlag(flags, 'agent'),
  tool: optionalFlag(flags, 'tool'),
  outcome: optionalFlag(flags, 'outcome'),
  since: optionalFlag(flags, 'since'),
  until: optionalFlag(flags, 'until'),
  limit: optionalFlag(flags, 'limit'),
  before: optionalFlag(flags, 'before'),
});

/** The audit trail from the CLI (operations/audit.ts, shared with the management API; ../audit/README.md). */
export const AUDIT_COMMANDS: Record<string, Command> = {
  'audit list': async ({ audit }, { flags }) => {
    const page = await listAudit(audit, query(flags));
    return {
      json: page,
      text: page.items.length
        ? [
            ...page.items.map((r) =>
              [
                r.at,
                r.kind,
                r.surface ?? '-',
                r.principal ?? '-',
                r.agent_id ?? '-',
                r.tool ?? '-',
                r.outcome ?? '-',
                r.call_id ?? '',
              ]
                .join('\t')
                .trimEnd(),
            ),
            ...(page.next ? [`(more: --before ${page.next})`] : []),
          ].join('\n')
        : '(no audit records)',
    };
  },
  'audit export': async ({ audit }, { flags }) => {
    const format = optionalFlag(flags, 'format') ?? 'jsonl';
    if (format !== 'jsonl') throw new InvalidRequestError('--format: jsonl');
    // JSON lines, in both modes, written page by page: an export of a year does not sit in memory.
    return { json: null, text: '', stream: exportAudit(audit, query(flags)) };
  },
  'audit verify': async ({ audit }, { flags }) => {
    const since = optionalFlag(flags, 'since');
    if (since !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(since))
      throw new InvalidRequestError('--since: a day, YYYY-MM-DD');
    const file = optionalFlag(flags, 'anchors');
    const given = file ? anchorsIn(readFileSync(file, 'utf8')) : [];
    const result = await verifyTrail(audit, since, given);
    const text = result.ok
      ? `audit trail intact: ${result.rows} rows in ${result.chains} chains, ${result.anchors} anchors checked`
      : [
          `audit trail BROKEN (${result.rows} rows in ${result.chains} chains, ${result.anchors} anchors):`,
          ...result.broken.map((b) => `  chain ${b.chain} row ${b.seq}: ${b.reason}`),
        ].join('\n');
    if (!result.ok) return { json: result, text, exitCode: 3 };
    return { json: result, text };
  },
};

/** Anchors from a log or an export: every JSON line with `chain`, `seq` and `hash` (the `audit anchor` lines). */
function anchorsIn(text: string): Anchor[] {
  const anchors: Anchor[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    try {
      const value = JSON.parse(line) as Partial<Anchor> & { msg?: string };
      if (typeof value.chain === 'string' && typeof value.seq === 'number' && typeof value.hash === 'string') {
        if (value.msg === undefined || value.msg === 'audit anchor')
          anchors.push({ chain: value.chain, seq: value.seq, hash: value.hash, at: value.at ?? '' });
      }
    } catch {
      // not a JSON line: skipped
    }
  }
  return anchors;
}
