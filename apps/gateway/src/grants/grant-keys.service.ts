import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { importKeyRing, importSigningKey, publicJwk, type KeyRing, type SigningKey } from '@mcpgw/grants';
import type { JWK } from 'jose';
import { existsSync, readFileSync } from 'node:fs';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';

/**
 * The keys of RuntimeGrants, from configuration: the verification keys by kid
 * (GRANT_VERIFICATION_KEYS, or else the public half of the signing key file) and
 * the signing key, which only minting (the admin CLI) loads: a serving gateway
 * keeps no private key in memory. Without any key, the grant surface answers 503
 * "not configured" instead of refusing every grant.
 */
@Injectable()
export class GrantKeysService implements OnModuleInit {
  private readonly logger = new Logger(GrantKeysService.name);
  private keyRing: KeyRing = new Map();

  constructor(@Inject(GATEWAY_ENV) private readonly env: GatewayEnv) {}

  async onModuleInit(): Promise<void> {
    const signingJwk = this.env.GRANT_VERIFICATION_KEYS ? undefined : this.readSigningJwk();
    const verification = this.env.GRANT_VERIFICATION_KEYS
      ? parseJwks(this.env.GRANT_VERIFICATION_KEYS)
      : signingJwk
        ? [publicJwk(signingJwk)]
        : [];
    this.keyRing = await importKeyRing(verification);
    if (this.keyRing.size === 0) this.logger.warn('no RuntimeGrant keys configured: the grant surface answers 503');
    else this.logger.log({ msg: 'grant verification keys loaded', kids: [...this.keyRing.keys()] });
  }

  get configured(): boolean {
    return this.keyRing.size > 0;
  }

  get ring(): KeyRing {
    return this.keyRing;
  }

  /** The signing key, read for one minting; throws with what to configure when there is none. */
  async signing(): Promise<SigningKey> {
    const jwk = this.readSigningJwk();
    if (!jwk) {
      throw new Error(
        `no grant signing key: put a private Ed25519 JWK in ${this.env.GRANT_SIGNING_KEY_FILE} (GRANT_SIGNING_KEY_FILE)`,
      );
    }
    return importSigningKey(jwk);
  }

  private readSigningJwk(): JWK | undefined {
    const file = this.env.GRANT_SIGNING_KEY_FILE;
    if (!file || !existsSync(file)) return undefined;
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as JWK;
    } catch (error) {
      throw new Error(`GRANT_SIGNING_KEY_FILE ${file} is not a JSON JWK: ${(error as Error).message}`);
    }
  }
}

function parseJwks(text: string): JWK[] {
  try {
    const value = JSON.parse(text) as unknown;
    const list = Array.isArray(value) ? value : (value as { keys?: unknown }).keys;
    if (!Array.isArray(list)) throw new Error('expected a JSON array of JWKs (or {"keys": [...]})');
    return list as JWK[];
  } catch (error) {
    throw new Error(`GRANT_VERIFICATION_KEYS: ${(error as Error).message}`);
  }
}
