import type { AuditTrail } from '../audit/audit-trail.service';
import type { Parsed } from './commands';

/** Commands that only read: not actions for the audit trail (every other command is one, refused or not). */
const READS = new Set([
  'agent list',
  'agent show',
  'apikey list',
  'pat list',
  'session list',
  'idempotency list',
  'idempotency show',
  'task list',
  'task show',
  'webhook list',
  'webhook deliveries',
  'console token',
  'call show',
  'call list',
  'tools changes',
  'audit list',
  'audit verify',
  'audit export',
]);

/** `console token list` and `agent credentials list` read; `console token` alone mints. */
function isRead(name: string, words: string[]): boolean {
  if (words[2] === 'list') return true;
  if (name === 'console token' || name === 'agent credentials') return false;
  if ((name === 'agent quotas' || name === 'agent auth') && words.length === 2) return true;
  return READS.has(name);
}

/**
 * An admin CLI command that changes something, as an audit row (principal
 * `cli`: the CLI has no identity of its own; the operator's shell and the
 * database role are who ran it): the command, its flags and words (a URL
 * without its userinfo and query), and how it ended.
 */
export function auditCommand(
  audit: AuditTrail,
  parsed: Parsed,
  outcome: { ok: true } | { ok: false; error: unknown },
): void {
  const name = parsed.words.slice(0, 2).join(' ');
  const hasChangeFlags = Object.keys(parsed.flags).some((flag) => !['json', 'agent', 'help'].includes(flag));
  if (isRead(name, parsed.words) && !(hasChangeFlags && (name === 'agent quotas' || name === 'agent auth'))) return;
  const target: Record<string, unknown> = {};
  for (const [flag, value] of Object.entries(parsed.flags)) {
    if (flag === 'json' || value === undefined) continue;
    target[flag] = typeof value === 'string' && flag === 'url' ? withoutSecrets(value) : value;
  }
  if (parsed.words.length > 2) target.ids = parsed.words.slice(2);
  const agent = typeof parsed.flags.agent === 'string' ? parsed.flags.agent : undefined;
  audit.adminAction({
    surface: 'cli',
    principal: 'cli',
    action: name,
    target,
    ...(agent && { agentId: agent }),
    outcome: outcome.ok ? 'ok' : codeOf(outcome.error),
  });
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' ? code : 'error';
}

function withoutSecrets(value: string): string {
  try {
    const url = new URL(value);
    return `${url.origin}${url.pathname}${url.search ? '?…' : ''}`;
  } catch {
    return '(not a URL)';
  }
}
