import { InvalidRequestError } from '@mcpgw/contracts';
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
