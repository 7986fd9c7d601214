import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';

/** A key that signs file URLs; `kid` travels in the URL so that keys can rotate. */
export interface UrlSigningKey {
  kid: string;
  secret: Buffer;
}

export type SignedMethod = 'GET' | 'PUT';

/** Why a signed URL is refused (the 403 body says which). */
export type UrlRefusal = 'malformed' | 'unknown_key' | 'tampered' | 'foreign_file' | 'wrong_method' | 'expired';

export type UrlCheck = { ok: true } | { ok: false; reason: UrlRefusal; message: string };

const KEY_ENTRY = /^([A-Za-z0-9._-]{1,64}):(.{32,})$/;

/**
 * `kid:secret[,kid:secret…]`, or the path of a file holding that. The first key
 * signs; every key verifies. Throws (naming the variable, never a secret) when
 * the value is neither.
 */
export function parseSigningKeys(value: string, name = 'FILES_URL_SIGNING_KEYS'): UrlSigningKey[] {
  let text = value.trim();
  if (!KEY_ENTRY.test(text.split(',')[0]) && existsSync(text)) text = readFileSync(text, 'utf8').trim();
  const keys = text
    .split(/[,\n]/)
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const match = KEY_ENTRY.exec(entry);
      if (!match) throw new Error(`${name}: each key must be kid:secret, with a secret of 32 characters or more`);
      return { kid: match[1], secret: Buffer.from(match[2], 'utf8') };
    });
  if (keys.length === 0) throw new Error(`${name}: no key`);
  return keys;
}

/** A key of this process only (development): URLs it signs fail on any other replica. */
export function ephemeralSigningKey(): UrlSigningKey {
  return { kid: `ephemeral-${randomBytes(4).toString('hex')}`, secret: randomBytes(32) };
}

/**
 * Signs and checks the query of a file URL: `file`, `method`, `expires` (Unix
 * seconds), `kid` and `sig`, the HMAC-SHA256 of the first four under the key
 * `kid` names. Bound to one file, one method and one expiry: change any of
 * them and the signature no longer matches.
 */
export class UrlSigner {
  private readonly byKid: Map<string, Buffer>;

  constructor(private readonly keys: UrlSigningKey[]) {
    this.byKid = new Map(keys.map((k) => [k.kid, k.secret]));
  }

  /** The query string (without `?`) that lets `method` reach `fileId` until `expiresAt`. */
  sign(fileId: string, method: SignedMethod, expiresAt: Date): string {
    const { kid, secret } = this.keys[0];
    const expires = String(Math.floor(expiresAt.getTime() / 1000));
    const sig = mac(secret, fileId, method, expires, kid);
    return new URLSearchParams({ file: fileId, method, expires, kid, sig }).toString();
  }

  /** Is `query` a valid signature for `method` on the file of the path, now? */
  check(query: Record<string, unknown>, pathFileId: string, method: string, now = Date.now()): UrlCheck {
    const { file, method: signedMethod, expires, kid, sig } = query;
    const strings = [file, signedMethod, expires, kid, sig];
    if (
      !strings.every((v): v is string => typeof v === 'string' && v.length > 0) ||
      !/^\d{1,12}$/.test(expires as string)
    )
      return refuse('malformed', 'the URL is not a signed file URL (file, method, expires, kid and sig are required)');
    const secret = this.byKid.get(kid as string);
    if (!secret) return refuse('unknown_key', 'the URL was signed with a key this gateway does not have');
    const expected = Buffer.from(mac(secret, file as string, signedMethod as string, expires as string, kid as string));
    const given = Buffer.from(sig as string);
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return refuse('tampered', 'the URL signature does not match: the URL was altered');
    if (file !== pathFileId) return refuse('foreign_file', 'the URL was signed for another file');
    const effective = method === 'HEAD' ? 'GET' : method;
    if (signedMethod !== effective)
      return refuse('wrong_method', `the URL was signed for ${signedMethod}, not ${method}`);
    if (Number(expires) * 1000 <= now) return refuse('expired', 'the URL has expired');
    return { ok: true };
  }
}

function mac(secret: Buffer, file: string, method: string, expires: string, kid: string): string {
  return createHmac('sha256', secret).update(`${file}\n${method}\n${expires}\n${kid}`).digest('base64url');
}

function refuse(reason: UrlRefusal, message: string): UrlCheck {
  return { ok: false, reason, message };
}
