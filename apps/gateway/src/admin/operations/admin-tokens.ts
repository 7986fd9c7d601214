import { InvalidRequestError } from '@mcpgw/contracts';
import type { AdminLoginCodesStore, LoginCodeView } from '../../admin-api/admin-login-codes.store';
import type { AdminTokensStore, AdminTokenView } from '../../admin-api/admin-tokens.store';

/** An admin token lives this long unless told otherwise (`--ttl`): a forgotten token dies by itself. */
export const ADMIN_TOKEN_DEFAULT_TTL_SECONDS = 30 * 86_400;
/** And at most this long. */
export const ADMIN_TOKEN_MAX_TTL_SECONDS = 366 * 86_400;

/** `console token`: a new admin token for the management API, shown once. */
export function mintConsoleToken(
  tokens: AdminTokensStore,
  options: { label?: string; ttlSeconds?: number },
): Promise<AdminTokenView & { token: string }> {
  const ttl = options.ttlSeconds ?? ADMIN_TOKEN_DEFAULT_TTL_SECONDS;
  if (!Number.isSafeInteger(ttl) || ttl < 1 || ttl > ADMIN_TOKEN_MAX_TTL_SECONDS) {
    throw new InvalidRequestError(`--ttl must be 1 to ${ADMIN_TOKEN_MAX_TTL_SECONDS} seconds`);
  }
  if (options.label !== undefined && options.label.length > 200) {
    throw new InvalidRequestError('--label: at most 200 characters');
  }
  return tokens.create(options.label, ttl);
}

/** A login link's code lives this long unless told otherwise: long enough to click, not to be found later. */
export const LOGIN_CODE_DEFAULT_TTL_SECONDS = 600;
/** And at most this long. */
export const LOGIN_CODE_MAX_TTL_SECONDS = 3600;

/**
 * `console login-link`: a one-time login code for the console, and the link
 * that carries it in its fragment (`<console>#login=<code>`: a fragment is never
 * sent to a server, so the code is in no request line, log or Referer). Shown once.
 */
export async function mintLoginLink(
  codes: AdminLoginCodesStore,
  options: { consoleUrl?: string; ttlSeconds?: number },
): Promise<LoginCodeView & { code: string; url: string | null }> {
  const ttl = options.ttlSeconds ?? LOGIN_CODE_DEFAULT_TTL_SECONDS;
  if (!Number.isSafeInteger(ttl) || ttl < 1 || ttl > LOGIN_CODE_MAX_TTL_SECONDS) {
    throw new InvalidRequestError(`--ttl must be 1 to ${LOGIN_CODE_MAX_TTL_SECONDS} seconds`);
  }
  let base: URL | undefined;
  if (options.consoleUrl !== undefined) {
    try {
      base = new URL(options.consoleUrl);
    } catch {
      throw new InvalidRequestError('--url: the console URL, like http://127.0.0.1:9001/console/');
    }
    if (!/^https?:$/.test(base.protocol)) throw new InvalidRequestError('--url: an http(s) URL');
  }
  const created = await codes.create(ttl);
  const url = base ? `${base.origin}${base.pathname}#login=${created.code}` : null;
  return { ...created, url };
}
