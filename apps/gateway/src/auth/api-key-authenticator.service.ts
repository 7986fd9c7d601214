import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { apiKeyId, apiKeyMatches } from '@mcpgw/grants';
import { CacheInvalidationService } from '../cache/cache-invalidation.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { ApiKeysStore } from './api-keys.store';
import { apiKeyPrincipal, type ApiKeyPrincipal } from './principal';

export type AuthResult = { ok: true; principal: ApiKeyPrincipal } | { ok: false; reason: string };

interface KeyEntry {
  agentId: string;
  digest: Buffer;
}

/**
 * The one answer to every bad key: unknown, revoked, wrong secret, or another
 * agent's. A caller holding a stolen key learns nothing about it from us.
 */
export const REFUSED_KEY = 'invalid or revoked API key';

/** Ids looked up in PostgreSQL because the index did not know them: at most this many per second. */
const UNKNOWN_LOOKUPS_PER_SECOND = 20;
/** An id PostgreSQL did not know is not looked up again for this long; the list is bounded. */
const MISSING_TTL_MS = 5_000;
const MISSING_MAX = 10_000;

/**
 * Verifies `X-Agent-API-Key`. Every active key's id, agent and digest (never a
 * key) are held in memory, so a request never waits on PostgreSQL and a flood
 * of made-up keys never reaches it. The index is loaded at start, kept current
 * by the `apikey:<id>` notifications that creating and revoking a key send (a
 * revoked key is dropped the moment the notice arrives), and read again in full
 * every AUTH_CACHE_TTL_MS and after a lost notification connection. An id the
 * index does not know (a key created a moment ago, before its notice) is looked
 * up, within a small per-second budget and a bounded list of ids known missing.
 */
@Injectable()
export class ApiKeyAuthenticator implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(ApiKeyAuthenticator.name);
  private index = new Map<string, KeyEntry>();
  private readonly missing = new Map<string, number>();
  private lookups = { second: 0, count: 0 };
  private reloadTimer?: NodeJS.Timeout;
  /**
   * Per reload in flight, the ids of the notices heard while it reads the table:
   * its snapshot may predate them (a key revoked meanwhile would come back for up
   * to AUTH_CACHE_TTL_MS), so for these ids the index keeps what the notices made of it.
   */
  private readonly heardDuringReloads = new Set<Set<string>>();

  constructor(
    private readonly keys: ApiKeysStore,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
    invalidation: CacheInvalidationService,
  ) {
    invalidation.on('apikey', (id) => {
      if (!id) return void this.reload();
      for (const heard of this.heardDuringReloads) heard.add(id);
      void this.refresh(id);
    });
  }

  async onModuleInit(): Promise<void> {
    await this.reload();
    this.reloadTimer = setInterval(() => void this.reload(), this.env.AUTH_CACHE_TTL_MS).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.reloadTimer);
  }

  async authenticate(presented: string | undefined, agentId: string): Promise<AuthResult> {
    const identified = await this.identify(presented);
    if (identified.ok && identified.principal.agentId !== agentId) return { ok: false, reason: REFUSED_KEY };
    return identified;
  }

  /** Whose key this is, for endpoints that name no agent (files: `POST /api/v1/files/presign-upload`). */
  async identify(presented: string | undefined): Promise<AuthResult> {
    if (!presented) return { ok: false, reason: 'missing X-Agent-API-Key header' };
    const id = apiKeyId(presented);
    const entry = id ? (this.index.get(id) ?? (await this.lookUpUnknown(id))) : undefined;
    if (!entry || !apiKeyMatches(presented, entry.digest)) return { ok: false, reason: REFUSED_KEY };
    return { ok: true, principal: apiKeyPrincipal(id!, entry.agentId) };
  }

  private async lookUpUnknown(id: string): Promise<KeyEntry | undefined> {
    if ((this.missing.get(id) ?? 0) > Date.now() || !this.takeLookup()) return undefined;
    const row = await this.keys.findActive(id);
    if (row) {
      const entry = { agentId: row.agent_id, digest: row.digest };
      this.index.set(id, entry);
      return entry;
    }
    if (this.missing.size >= MISSING_MAX) this.missing.clear();
    this.missing.set(id, Date.now() + MISSING_TTL_MS);
    return undefined;
  }

  /** A per-second budget of PostgreSQL lookups for ids the index does not know. */
  private takeLookup(): boolean {
    const second = Math.floor(Date.now() / 1000);
    if (second !== this.lookups.second) this.lookups = { second, count: 0 };
    return ++this.lookups.count <= UNKNOWN_LOOKUPS_PER_SECOND;
  }

  /** A key was created or revoked: drop it at once, then read it again (a new key comes back). */
  private async refresh(id: string): Promise<void> {
    this.index.delete(id);
    this.missing.delete(id);
    try {
      const row = await this.keys.findActive(id);
      if (row) this.index.set(id, { agentId: row.agent_id, digest: row.digest });
    } catch (error) {
      this.logger.warn(`reading API key ${id}: ${(error as Error).message}`);
    }
  }

  /** Read every active key again, except those a notice told about meanwhile (refresh has them right). */
  private async reload(): Promise<void> {
    const heard = new Set<string>();
    this.heardDuringReloads.add(heard);
    try {
      const rows = await this.keys.listActiveDigests();
      const index = new Map(rows.map((row) => [row.id, { agentId: row.agent_id, digest: row.digest }]));
      for (const id of heard) {
        const current = this.index.get(id);
        if (current) index.set(id, current);
        else index.delete(id);
      }
      this.index = index;
    } catch (error) {
      // Keys the index lacks are still looked up (within the budget) until a reload works.
      this.logger.warn(`loading API keys: ${(error as Error).message}`);
    } finally {
      this.heardDuringReloads.delete(heard);
    }
  }
}
