/**
 * Opaque list cursors: base64url of "o:<offset>". A client must pass back what
 * it got; anything else is an invalid cursor (-32602).
 */
export function encodeCursor(offset: number): string {
  return Buffer.from(`o:${offset}`).toString('base64url');
}

export function decodeCursor(cursor: unknown): number | undefined {
  if (cursor === undefined) return 0;
  if (typeof cursor !== 'string' || !/^[A-Za-z0-9_-]{1,32}$/.test(cursor)) return undefined;
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return match ? Number(match[1]) : undefined;
}

/** One page of `items` and the cursor of the next, if any. */
export function page<T>(items: T[], offset: number, size: number): { items: T[]; nextCursor?: string } {
  const end = offset + size;
  return { items: items.slice(offset, end), ...(end < items.length ? { nextCursor: encodeCursor(end) } : {}) };
}
