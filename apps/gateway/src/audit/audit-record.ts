import { createHash } from 'node:crypto';
import { holdsUnstorableText } from '@mcpgw/contracts';
import { canonicalJson } from '../idempotency/fingerprint';

/** What a row records (README.md here). */
export type AuditKind = 'tool_call' | 'admin_action' | 'auth_failure' | 'tool_change';

/**
 * One row of the trail, as written and as read back: every field is part of its hash. Plain
 * JSON values only (no Date or class with `toJSON`: the hash reads the value, the database its
 * JSON), and nothing given to the trail is changed after it is appended: the row is hashed when
 * its batch is written, not when it is appended.
 */
export interface AuditEntry {
  kind: AuditKind;
  /** When it happened (milliseconds: what JavaScript and the hash see). */
  at: string;
  /** `mcp-a`, `mcp-b`, `rest`, `a2a`, `admin-api`, `cli`… */
  surface: string | null;
  /** Who: the caller id (`apikey:…`, `oauth:…`, the grant's task), `admin:<token id>`, `cli`, or the source address of failed logins. */
  principal: string | null;
  agent_id: string | null;
  tool: string | null;
  call_id: string | null;
  /** `ok`, `tool_error`, an error kind (`agent_timeout`…), `refused`, `approved`… */
  outcome: string | null;
  /** The gateway's error kind, or the HTTP status of an admin action or refusal. */
  error_code: string | null;
  duration_ms: number | null;
  pod_id: string | null;
  replayed: boolean | null;
  /** SHA-256 (hex) of the call's canonical arguments. */
  arguments_digest: string | null;
  /** The arguments, only with AUDIT_ARGUMENTS=full or redacted. */
  arguments: unknown;
  /** What else the kind says: an admin action's command and target, a refusal's count and reason, a change's version. */
  detail: Record<string, unknown> | null;
}

/** A row with its place in its chain. */
export interface ChainedEntry extends AuditEntry {
  /** The chain: `<day>/<writer>` (one per writer and UTC day, so writers never wait for each other). */
  chain: string;
  seq: number;
  prev_hash: string;
  hash: string;
}

/** The hash before a chain's first row. */
export const GENESIS_HASH = '0'.repeat(64);

/** The fields of a canonical row, in the order canonical JSON sorts them. */
const CANONICAL_FIELDS = [
  'agent_id',
  'arguments',
  'arguments_digest',
  'at',
  'call_id',
  'chain',
  'detail',
  'duration_ms',
  'error_code',
  'kind',
  'outcome',
  'pod_id',
  'principal',
  'replayed',
  'seq',
  'surface',
  'tool',
] as const satisfies readonly (keyof AuditEntry | 'chain' | 'seq')[];

/**
 * Every field of an entry but its chain link, as canonical JSON (sorted keys, no
 * undefined; absent arguments are null). Written field by field in their sorted
 * order rather than sorted on every row: the same text (a test pins two rows'
 * hashes), for a fraction of the CPU of every call the gateway records.
 */
export function canonicalEntry(entry: AuditEntry & { chain: string; seq: number }): string {
  let text = '';
  for (const field of CANONICAL_FIELDS) {
    const value = field === 'arguments' ? (entry.arguments ?? null) : entry[field];
    if (value === undefined) continue;
    text += `${text ? ',' : '{'}"${field}":${canonicalJson(value)}`;
  }
  return text ? `${text}}` : '{}';
}

/** `hash = SHA-256(previous hash ‖ canonical row)`, hex. */
export function chainHash(prevHash: string, entry: AuditEntry & { chain: string; seq: number }): string {
  return createHash('sha256').update(prevHash).update('\n').update(canonicalEntry(entry)).digest('hex');
}

/**
 * What PostgreSQL's text and jsonb can hold: U+0000 and lone UTF-16 surrogates
 * (which a caller can put in a tool name, a path parameter or an argument)
 * become U+FFFD, in strings and keys at any depth. One unstorable row would
 * fail its whole batch and hold up the chain behind it. A value with nothing
 * to replace (nearly every one) is returned as it is, after one read.
 */
export function storable<T>(value: T): T {
  return holdsUnstorableText(value) ? replaced(value) : value;
}

function replaced<T>(value: T): T {
  if (typeof value === 'string') return value.replace(UNSTORABLE, '\uFFFD') as T;
  if (Array.isArray(value)) return value.map(replaced) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, item]) => [replaced(key), replaced(item)]),
  ) as T;
}

const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** An entry with every field null but those given, storable. */
export function auditEntry(kind: AuditKind, fields: Partial<AuditEntry>): AuditEntry {
  return storable({
    kind,
    at: new Date().toISOString(),
    surface: null,
    principal: null,
    agent_id: null,
    tool: null,
    call_id: null,
    outcome: null,
    error_code: null,
    duration_ms: null,
    pod_id: null,
    replayed: null,
    arguments_digest: null,
    arguments: null,
    detail: null,
    ...fields,
  });
}
