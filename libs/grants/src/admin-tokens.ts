import { ADMIN_LOGIN_CODE_PREFIX, ADMIN_SESSION_PREFIX, ADMIN_TOKEN_PREFIX } from '@mcpgw/contracts';
import { createHmac } from 'node:crypto';
import { mintToken, tokenId, type MintedToken } from './secret-tokens';

/**
 * Admin tokens: `adm_<id>_<secret>`, an operator's credential for the gateway's
 * management API (apps/gateway/src/admin-api). Minted by the admin CLI
 * (`console token`), stored as digests, revocable. The prefix lives in
 * libs/contracts `secret-formats.ts`, with the pattern that keeps them out of the logs.
 */
export { ADMIN_LOGIN_CODE_PREFIX, ADMIN_SESSION_PREFIX, ADMIN_TOKEN_PREFIX };

export function mintAdminToken(): MintedToken {
  return mintToken(ADMIN_TOKEN_PREFIX);
}

/** The id of a well-formed admin token, or undefined. Does not prove the token valid. */
export function adminTokenId(presented: string): string | undefined {
  return tokenId(ADMIN_TOKEN_PREFIX, presented);
}

/** A browser session of the management API (its cookie's value), made by logging in with an admin token. */
export function mintAdminSession(): MintedToken {
  return mintToken(ADMIN_SESSION_PREFIX);
}

export function adminSessionId(presented: string): string | undefined {
  return tokenId(ADMIN_SESSION_PREFIX, presented);
}

/** A one-time login code (the console's login link): exchanged once, shortly, for a session. */
export function mintAdminLoginCode(): MintedToken {
  return mintToken(ADMIN_LOGIN_CODE_PREFIX);
}

export function adminLoginCodeId(presented: string): string | undefined {
  return tokenId(ADMIN_LOGIN_CODE_PREFIX, presented);
}

/**
 * The CSRF token of a session: derived from the session's secret (HMAC), so it is
 * never stored, a page can read it (its cookie is not HttpOnly) without learning
 * the session, and another session's cannot be passed off for this one.
 */
export function csrfTokenOf(session: string): string {
  return createHmac('sha256', session).update('mcpgw-admin-csrf').digest('base64url');
}
