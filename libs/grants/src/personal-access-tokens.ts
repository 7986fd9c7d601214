import { PAT_PREFIX } from '@mcpgw/contracts';
import { mintToken, tokenId, type MintedToken } from './secret-tokens';

/**
 * Personal access tokens: `pat_<id>_<secret>`, a person's credential. They exist
 * so that endpoints can recognise and refuse them where a task-scoped
 * RuntimeGrant is required.
 */
export { PAT_PREFIX }; // defined in libs/contracts `secret-formats.ts`, next to its log redaction

export function mintPersonalAccessToken(): MintedToken {
  return mintToken(PAT_PREFIX);
}

/** Looks like a personal access token (well-formed or not). */
export function isPersonalAccessToken(presented: string): boolean {
  return presented.startsWith(PAT_PREFIX);
}

export function personalAccessTokenId(presented: string): string | undefined {
  return tokenId(PAT_PREFIX, presented);
}
