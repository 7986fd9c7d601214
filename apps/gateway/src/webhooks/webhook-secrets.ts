import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { GatewayEnv } from '../config/gateway.env';

/** Standard Webhooks secrets: `whsec_` and the base64 of the key bytes. */
export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
/** Ciphertext layout: version (1 byte) | IV (12) | ciphertext | tag (16). */
const FORMAT_V1 = 1;

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

/**
 * Encrypts webhook secrets at rest with AES-256-GCM. The gateway must sign with
 * the secret itself, so a hash will not do; the key comes from WEBHOOK_SECRET_KEY
 * (or, in development, a file made on first use) and never reaches the database.
 * The webhook id is the additional data: a ciphertext copied to another row does not open.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static fromEnv(env: Pick<GatewayEnv, 'WEBHOOK_SECRET_KEY' | 'WEBHOOK_SECRET_KEY_FILE'>): SecretBox {
    const material = env.WEBHOOK_SECRET_KEY || keyFile(env.WEBHOOK_SECRET_KEY_FILE);
    return new SecretBox(Buffer.from(hkdfSync('sha256', material, 'mcpgw', 'webhook-secrets v1', 32)));
  }

  seal(webhookId: string, secret: string): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(Buffer.from(webhookId));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([FORMAT_V1]), iv, sealed, cipher.getAuthTag()]);
  }

  /** Throws when the key is not the one that sealed it (the message names no secret). */
  open(webhookId: string, sealed: Buffer): string {
    if (sealed[0] !== FORMAT_V1 || sealed.length < 1 + 12 + 16) throw new Error('unknown webhook secret format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(1, 13)).setAAD(Buffer.from(webhookId));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    try {
      return Buffer.concat([decipher.update(sealed.subarray(13, sealed.length - 16)), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw new Error(`the secret of webhook ${webhookId} does not open with this WEBHOOK_SECRET_KEY`);
    }
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
