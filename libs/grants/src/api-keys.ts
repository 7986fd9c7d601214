import { API_KEY_PREFIX } from '@mcpgw/contracts';
import { digestToken, mintToken, tokenId, tokenMatches } from './secret-tokens';

/**
 * Agent API keys: `bak_<id>_<secret>`, scoped to one agent (surface A). The
 * prefix lives in libs/contracts `secret-formats.ts`, with the pattern that
 * keeps keys out of the logs.
 */
export { API_KEY_PREFIX };

export interface MintedApiKey {
  id: string;
  /** The full key. Shown once, never stored. */
  key: string;
  digest: Buffer;
}

export function mintApiKey(): MintedApiKey {
  const { id, token, digest } = mintToken(API_KEY_PREFIX);
  return { id, key: token, digest };
}

/** The key id of a well-formed key, or undefined. Does not prove the key is valid. */
export function apiKeyId(presented: string): string | undefined {
  return tokenId(API_KEY_PREFIX, presented);
}

export const digestApiKey = digestToken;
export const apiKeyMatches = tokenMatches;
