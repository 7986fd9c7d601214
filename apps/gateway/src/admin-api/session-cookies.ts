import { timingSafeEqual } from 'node:crypto';

/**
 * The browser session's cookies. `__Host-`: only over HTTPS (or a loopback
 * origin, which browsers treat as secure), set by this host alone, path `/`.
 * The session cookie is HttpOnly; the CSRF cookie is readable by the console's
 * own pages, which echo it in `X-CSRF-Token` (double submit).
 */
export const SESSION_COOKIE = '__Host-mcpgw_admin';
export const CSRF_COOKIE = '__Host-mcpgw_admin_csrf';
export const CSRF_HEADER = 'x-csrf-token';

/** The cookies of a `Cookie` header, by name (the first of a repeated name). */
export function readCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const pair of (header ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at < 0) continue;
    const name = pair.slice(0, at).trim();
    if (!cookies.has(name)) cookies.set(name, pair.slice(at + 1).trim());
  }
  return cookies;
}

/** `Set-Cookie` values that open a session for `maxAgeSeconds`. */
export function sessionCookies(session: string, csrf: string, maxAgeSeconds: number): string[] {
  const common = `Path=/; Secure; SameSite=Strict; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`;
  return [`${SESSION_COOKIE}=${session}; ${common}; HttpOnly`, `${CSRF_COOKIE}=${csrf}; ${common}`];
}

/** `Set-Cookie` values that remove both. */
export function clearedCookies(): string[] {
  return sessionCookies('', '', 0);
}

/** Constant-time equality of two strings (false when either is missing). */
export function sameSecret(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
