import type { ByteRange } from './storage/file-storage';

/**
 * One `Range: bytes=…` of a file of `size` bytes (RFC 9110 §14): `a-b`, `a-`
 * or `-n` (the last n). Undefined: send the whole file (no header, another
 * unit, or several ranges, which a server may answer whole). 'unsatisfiable':
 * 416.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | undefined | 'unsatisfiable' {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}
