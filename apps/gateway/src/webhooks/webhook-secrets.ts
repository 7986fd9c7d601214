import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { GatewayEnv } from '../config/gateway.env';

/** Standard Webhooks secrets: `whsec_` and the base64 of the key bytes. */
export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
/** Sealed before key ids: version (1 byte) | IV (12) | ciphertext | tag (16); opened by trying each key. */
const FORMAT_V1 = 1;
/** version (1 byte) | key id (8) | IV (12) | ciphertext | tag (16). */
const FORMAT_V2 = 2;
const KEY_ID_BYTES = 8;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A new webhook secret, shown once. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The HMAC key of a secret: the bytes its base64 stands for. */
export function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/**
 * Standard Webhooks 1.0 signature of one attempt: `v1,<base64 HMAC-SHA256(secret
 * bytes, "<id>.<timestamp>.<body>")>`, one per secret, space-separated.
 */
export function signatureHeader(secrets: string[], id: string, timestamp: number, body: string): string {
  return secrets
    .map(
      (secret) =>
        `v1,${createHmac('sha256', secretBytes(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`,
    )
    .join(' ');
}

/** One key of the box: the AES key derived from its material, and the id that names it in a ciphertext. */
interface SealingKey {
  key: Buffer;
  /** HMAC of a constant under the key: names the key, tells nothing of it. */
  id: Buffer;
}

function sealingKey(material: string): SealingKey {
  const key = Buffer.from(hkdfSync('sha256', material, 'mcpgw', 'webhook-secrets v1', 32));
  const id = createHmac('sha256', key).update('webhook-secrets key id').digest().subarray(0, KEY_ID_BYTES);
  return { key, id };
}

/** The env a SecretBox reads; previous keys are optional (a box without them opens only what its key sealed). */
export type SecretBoxEnv = Pick<GatewayEnv, 'WEBHOOK_SECRET_KEY' | 'WEBHOOK_SECRET_KEY_FILE'> &
  Partial<Pick<GatewayEnv, 'WEBHOOK_SECRET_PREVIOUS_KEYS'>>;

/**
 * Encrypts webhook secrets at rest with AES-256-GCM. The gateway must sign with
 * the secret itself, so a hash will not do; the key comes from WEBHOOK_SECRET_KEY
 * (or, in development, a file made on first use) and never reaches the database.
 * The webhook id is the additional data: a ciphertext copied to another row does not open.
 *
 * Rotation: a ciphertext names its key (an id derived from it), new ones are sealed
 * with WEBHOOK_SECRET_KEY, and the keys in WEBHOOK_SECRET_PREVIOUS_KEYS still open
 * what they sealed, until `webhook reseal-secrets` has sealed everything again
 * with the current key (README.md of this folder).
 */
export class SecretBox {
  private constructor(
    private readonly current: SealingKey,
    private readonly previous: SealingKey[],
  ) {}

  static fromEnv(env: SecretBoxEnv): SecretBox {
    const material = env.WEBHOOK_SECRET_KEY || keyFile(env.WEBHOOK_SECRET_KEY_FILE);
    const previous = (env.WEBHOOK_SECRET_PREVIOUS_KEYS ?? '').split(',').filter(Boolean);
    return new SecretBox(sealingKey(material), previous.map(sealingKey));
  }

  seal(webhookId: string, secret: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv).setAAD(Buffer.from(webhookId));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([FORMAT_V2]), this.current.id, iv, sealed, cipher.getAuthTag()]);
  }

  /** Whether `sealed` is already sealed with the current key (a reseal leaves it alone). */
  isCurrent(sealed: Buffer): boolean {
    return sealed[0] === FORMAT_V2 && sealed.subarray(1, 1 + KEY_ID_BYTES).equals(this.current.id);
  }

  /**
   * The secret, opened with the key that sealed it: the current one or a previous
   * one. Throws when no configured key did, or the ciphertext was changed; the
   * message names the webhook, never a secret or a key.
   */
  open(webhookId: string, sealed: Buffer): string {
    const keys = [this.current, ...this.previous];
    if (sealed[0] === FORMAT_V2 && sealed.length >= 1 + KEY_ID_BYTES + IV_BYTES + TAG_BYTES) {
      const id = sealed.subarray(1, 1 + KEY_ID_BYTES);
      const key = keys.find((candidate) => candidate.id.equals(id));
      if (!key) throw this.noKey(webhookId);
      const opened = decrypt(key.key, webhookId, sealed.subarray(1 + KEY_ID_BYTES));
      if (opened === undefined) throw new Error(`the secret of webhook ${webhookId} does not open: it was altered`);
      return opened;
    }
    if (sealed[0] !== FORMAT_V1 || sealed.length < 1 + IV_BYTES + TAG_BYTES) {
      throw new Error('unknown webhook secret format');
    }
    for (const { key } of keys) {
      const opened = decrypt(key, webhookId, sealed.subarray(1));
      if (opened !== undefined) return opened;
    }
    throw this.noKey(webhookId);
  }

  private noKey(webhookId: string): Error {
    const previous = this.previous.length ? ' nor WEBHOOK_SECRET_PREVIOUS_KEYS' : '';
    return new Error(`the secret of webhook ${webhookId} does not open with this WEBHOOK_SECRET_KEY${previous}`);
  }
}

/** IV | ciphertext | tag, opened; undefined when the key or the webhook id is not the one that sealed it. */
function decrypt(key: Buffer, webhookId: string, body: Buffer): string | undefined {
  const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, IV_BYTES)).setAAD(Buffer.from(webhookId));
  decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
  try {
    return Buffer.concat([
      decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    return undefined;
  }
}

/** The development key file: read, or made (exclusively, so concurrent starts agree on one key). */
function keyFile(path: string): string {
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true });
    try {
      writeFileSync(path, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  // Another process may have made it a moment ago and be writing it still.
  for (let tries = 0; ; tries++) {
    const key = readFileSync(path, 'utf8').trim();
    if (key.length >= 32) return key;
    if (tries === 50) throw new Error(`WEBHOOK_SECRET_KEY_FILE ${path} holds no key (32+ characters)`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
  }
}
