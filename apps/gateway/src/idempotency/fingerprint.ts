import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level, so that two argument objects
 * that differ only in key order have the same text.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What an idempotency record remembers of a call: the tool and its arguments (without the key). */
export function callFingerprint(tool: string, args: Record<string, unknown>): Buffer {
  return createHash('sha256').update(tool).update('\n').update(canonicalJson(args)).digest();
}
