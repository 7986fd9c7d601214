import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Bearer secrets of the form `<prefix><id>_<secret>`: the id is public (it names
 * the token in logs, the CLI and the database); the secret is 32 random bytes.
 * Only a SHA-256 digest of the whole token is stored: with 256 bits of entropy
 * a slow password hash would add nothing but latency on every request.
 */
const ID_BYTES = 9;
const SECRET_BYTES = 32;

export interface MintedToken {
  /** Public id, e.g. for `apikey revoke <id>`. */
  id: string;
  /** The full token. Shown once, never stored. */
  token: string;
  /** What the database keeps. */
  digest: Buffer;
}

export function mintToken(prefix: string): MintedToken {
  const id = mintId();
  const token = `${prefix}${id}_${randomBytes(SECRET_BYTES).toString('base64url')}`;
  return { id, token, digest: digestToken(token) };
}

/**
 * A public id: 12 base64url characters that never begin with `-`, so that
 * `apikey revoke <id>` cannot be read as an option (one id in 64 did).
 */
function mintId(): string {
  for (;;) {
    const id = randomBytes(ID_BYTES).toString('base64url');
    if (id[0] !== '-') return id;
  }
}

/** The id of a well-formed token with this prefix, or undefined. Does not prove the token valid. */
export function tokenId(prefix: string, presented: string): string | undefined {
  if (!presented.startsWith(prefix)) return undefined;
  return /^([A-Za-z0-9_-]{12})_([A-Za-z0-9_-]{43})$/.exec(presented.slice(prefix.length))?.[1];
}

export function digestToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Constant-time comparison of a presented token with a stored digest. */
export function tokenMatches(presented: string, storedDigest: Buffer): boolean {
  const digest = digestToken(presented);
  return digest.length === storedDigest.length && timingSafeEqual(digest, storedDigest);
}
