import { ADMIN_TOKEN_PREFIX } from '@mcpgw/contracts';
import { mintToken, tokenId, type MintedToken } from './secret-tokens';

/**
 * Admin tokens: `adm_<id>_<secret>`, an operator's credential for the gateway's
 * management API (apps/gateway/src/admin-api). Minted by the admin CLI
 * (`console token`), stored as digests, revocable. The prefix lives in
 * libs/contracts `secret-formats.ts`, with the pattern that keeps them out of the logs.
 */
export { ADMIN_TOKEN_PREFIX };

export function mintAdminToken(): MintedToken {
  return mintToken(ADMIN_TOKEN_PREFIX);
}

/** The id of a well-formed admin token, or undefined. Does not prove the token valid. */
export function adminTokenId(presented: string): string | undefined {
  return tokenId(ADMIN_TOKEN_PREFIX, presented);
}
