import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Agent API keys: `bak_<id>_<secret>`. The id is public (it names the key in
 * logs, the CLI and the database); the secret is 32 random bytes. Only a
 * SHA-256 digest of the whole key is stored: the key has 256 bits of entropy,
 * so a slow password hash would add nothing but latency on every request.
 */
export const API_KEY_PREFIX = 'bak_';
const ID_BYTES = 9;
const SECRET_BYTES = 32;
const API_KEY_PATTERN = /^bak_([A-Za-z0-9_-]{12})_([A-Za-z0-9_-]{43})$/;

export interface MintedApiKey {
  /** Public key id, e.g. for `apikey revoke <id>`. */
  id: string;
  /** The full key. Shown once, never stored. */
  key: string;
  /** What the database keeps. */
  digest: Buffer;
}

export function mintApiKey(): MintedApiKey {
  const id = randomBytes(ID_BYTES).toString('base64url');
  const key = `${API_KEY_PREFIX}${id}_${randomBytes(SECRET_BYTES).toString('base64url')}`;
  return { id, key, digest: digestApiKey(key) };
}

/** The key id of a well-formed key, or undefined. Does not prove the key is valid. */
export function apiKeyId(presented: string): string | undefined {
  return API_KEY_PATTERN.exec(presented)?.[1];
}

export function digestApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** Constant-time comparison of a presented key with a stored digest. */
export function apiKeyMatches(presented: string, storedDigest: Buffer): boolean {
  const digest = digestApiKey(presented);
  return digest.length === storedDigest.length && timingSafeEqual(digest, storedDigest);
}
