import { createHash } from 'node:crypto';
import { canonicalJson } from '../idempotency/fingerprint';

export type ArgumentsPolicy = 'digest' | 'redacted' | 'full';

export const REDACTED = '[redacted]';

/** AUDIT_REDACT's words as one test: a key holding any of them, in any case. */
export function redactedKeys(words: string): RegExp {
  const escaped = words.split(',').map((word) => word.replace(/[^A-Za-z0-9_]/g, (c) => `\\${c}`));
  return new RegExp(escaped.join('|'), 'i');
}

/**
 * What a tool call's row keeps of its arguments: always their digest (SHA-256
 * of the canonical JSON: the same arguments in any key order have one digest,
 * so an auditor holding a copy can prove which call it was); the arguments
 * themselves only with `full`, or with `redacted`, where the value of every
 * key matching `redact` (at any depth) is replaced.
 */
export function auditedArguments(
  args: Record<string, unknown>,
  policy: ArgumentsPolicy,
  redact: RegExp,
): { arguments_digest: string; arguments: unknown } {
  const arguments_digest = createHash('sha256').update(canonicalJson(args)).digest('hex');
  if (policy === 'digest') return { arguments_digest, arguments: null };
  return { arguments_digest, arguments: policy === 'full' ? args : redacted(args, redact) };
}

function redacted(value: unknown, redact: RegExp): unknown {
  if (Array.isArray(value)) return value.map((item) => redacted(item, redact));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, item]) => [
      key,
      redact.test(key) ? REDACTED : redacted(item, redact),
    ]),
  );
}
