import { Inject, Injectable } from '@nestjs/common';
import { apiKeyId, apiKeyMatches, digestApiKey } from '@mcpgw/grants';
import { CacheInvalidationService } from '../cache/cache-invalidation.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { ApiKeysStore } from './api-keys.store';

/** Who is calling: an API key of one agent. */
export interface ApiKeyPrincipal {
  kind: 'api_key';
  /** Stable, non-secret id: scopes sessions (and idempotency keys) to this caller. */
  id: string;
  agentId: string;
}

export type AuthResult = { ok: true; principal: ApiKeyPrincipal } | { ok: false; reason: string };

interface Cached {
  principal: ApiKeyPrincipal;
  until: number;
}

/** A key that failed verification is not looked up again for this long (keys are random: no false refusals). */
const REFUSED_TTL_MS = 5_000;
const REFUSED_MAX = 10_000;

/**
 * Verifies `X-Agent-API-Key` for an agent. Verified keys are cached by digest
 * (never by the key itself) for AUTH_CACHE_TTL_MS; a revocation on any replica
 * or from the admin CLI drops the entry at once through PostgreSQL NOTIFY.
 */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly verified = new Map<string, Cached>();
  /** Digests of keys that failed, so a flood of bad keys does not reach PostgreSQL. */
  private readonly refused = new Map<string, number>();

  constructor(
    private readonly keys: ApiKeysStore,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
    invalidation: CacheInvalidationService,
  ) {
    invalidation.on('apikey', (id) => this.forget(id));
  }

  async authenticate(presented: string | undefined, agentId: string): Promise<AuthResult> {
    if (!presented) return { ok: false, reason: 'missing X-Agent-API-Key header' };
    const digest = digestApiKey(presented).toString('hex');
    if ((this.refused.get(digest) ?? 0) > Date.now()) return { ok: false, reason: 'invalid or revoked API key' };
    const cached = this.verified.get(digest);
    const principal = cached && cached.until > Date.now() ? cached.principal : await this.verify(presented, digest);
    if (!principal) return { ok: false, reason: 'invalid or revoked API key' };
    if (principal.agentId !== agentId) return { ok: false, reason: 'this API key is not for this agent' };
    return { ok: true, principal };
  }

  private async verify(presented: string, digest: string): Promise<ApiKeyPrincipal | undefined> {
    this.verified.delete(digest);
    const id = apiKeyId(presented);
    const row = id ? await this.keys.findActive(id) : undefined;
    if (!id || !row || !apiKeyMatches(presented, row.digest)) {
      if (this.refused.size >= REFUSED_MAX) this.refused.clear();
      this.refused.set(digest, Date.now() + REFUSED_TTL_MS);
      return undefined;
    }
    const principal: ApiKeyPrincipal = { kind: 'api_key', id, agentId: row.agent_id };
    if (this.env.AUTH_CACHE_TTL_MS > 0) {
      this.verified.set(digest, { principal, until: Date.now() + this.env.AUTH_CACHE_TTL_MS });
    }
    return principal;
  }

  private forget(keyId: string | undefined): void {
    if (!keyId) return this.verified.clear();
    for (const [digest, entry] of this.verified) if (entry.principal.id === keyId) this.verified.delete(digest);
  }
}
