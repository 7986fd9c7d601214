import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { API_KEY_PREFIX, isPersonalAccessToken, verifyRuntimeGrant, type RuntimeGrant } from '@mcpgw/grants';
import { CacheInvalidationService } from '../cache/cache-invalidation.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { GrantKeysService } from './grant-keys.service';
import { GrantRevocationsStore } from './grant-revocations.store';

export type GrantAuthResult = { ok: true; grant: RuntimeGrant } | { ok: false; reason: string };

const RELOAD_EVERY_MS = 10 * 60_000;

/**
 * Authenticates the grant surface: exactly one `Authorization: Bearer <RuntimeGrant>`
 * header, a valid grant that is not revoked and names the workspace and agent of
 * the path. Revocations are held in memory (a set of ids), filled from
 * PostgreSQL at start and kept current by NOTIFY, so the check costs no I/O.
 */
@Injectable()
export class RuntimeGrantAuthenticator implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RuntimeGrantAuthenticator.name);
  private revoked = new Set<string>();
  /** Until revocations have been read once, no grant is accepted (fail closed). */
  private revocationsLoaded = false;
  /** Revocations heard while a reload reads the table, so the reload cannot drop them. */
  private heardDuringReload?: Set<string>;
  private reloadTimer?: NodeJS.Timeout;

  constructor(
    private readonly keys: GrantKeysService,
    private readonly revocations: GrantRevocationsStore,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
    invalidation: CacheInvalidationService,
  ) {
    invalidation.on('grant', (id) => {
      if (!id) return void this.reload();
      this.revoked.add(id);
      this.heardDuringReload?.add(id);
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.reload();
    this.reloadTimer = setInterval(() => void this.reload(), RELOAD_EVERY_MS).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.reloadTimer);
  }

  get configured(): boolean {
    return this.keys.configured && this.revocationsLoaded;
  }

  /** `rawHeaders` as Node gives them (Node keeps only the first Authorization header elsewhere). */
  async authenticate(rawHeaders: string[], workspaceId: string, agentId: string): Promise<GrantAuthResult> {
    const verified = await this.verify(rawHeaders);
    if (!verified.ok) return verified;
    const { grant } = verified;
    if (grant.workspaceId !== workspaceId)
      return { ok: false, reason: `the grant is not for workspace ${workspaceId}` };
    if (grant.agentId !== agentId) return { ok: false, reason: `the grant is not for agent ${agentId}` };
    return { ok: true, grant };
  }

  /**
   * A valid, unrevoked grant in the one `Authorization` header, whatever its
   * workspace and agent: for endpoints that name neither (files), which then
   * act for the grant's own agent and task.
   */
  async verify(rawHeaders: string[]): Promise<GrantAuthResult> {
    const authorizations = rawHeaders.filter(
      (_, i) => i % 2 === 1 && rawHeaders[i - 1].toLowerCase() === 'authorization',
    );
    if (authorizations.length === 0) return { ok: false, reason: 'missing Authorization header' };
    if (authorizations.length > 1) return { ok: false, reason: 'send exactly one Authorization header' };
    const match = /^Bearer +(\S+)$/i.exec(authorizations[0].trim());
    if (!match) return { ok: false, reason: 'Authorization must be "Bearer <RuntimeGrant>"' };
    const token = match[1];
    if (isPersonalAccessToken(token)) {
      return {
        ok: false,
        reason: 'a personal access token cannot be used here: this endpoint needs a task-scoped RuntimeGrant',
      };
    }
    if (token.startsWith(API_KEY_PREFIX)) {
      return {
        ok: false,
        reason: 'an agent API key cannot be used here: this endpoint needs a task-scoped RuntimeGrant',
      };
    }
    const verified = await verifyRuntimeGrant(token, this.keys.ring, { maxAgeSeconds: this.env.GRANT_MAX_TTL_SECONDS });
    if (!verified.ok) return { ok: false, reason: verified.message };
    const { grant } = verified;
    // A revocation is kept for GRANT_MAX_TTL_SECONDS: a grant living longer could outlive it.
    if (grant.expiresAt.getTime() - grant.issuedAt.getTime() > this.env.GRANT_MAX_TTL_SECONDS * 1000) {
      return { ok: false, reason: `the grant lives longer than ${this.env.GRANT_MAX_TTL_SECONDS} s` };
    }
    if (this.revoked.has(grant.id)) return { ok: false, reason: 'the grant has been revoked' };
    return { ok: true, grant };
  }

  /** Read the live revocations (dropping expired ones from memory), keeping any heard meanwhile. */
  private async reload(): Promise<void> {
    const heard = (this.heardDuringReload = new Set<string>());
    try {
      const active = await this.revocations.active();
      this.revoked = new Set([...active, ...heard]);
      this.revocationsLoaded = true;
      await this.revocations.purgeExpired();
    } catch (error) {
      this.logger.warn(`loading grant revocations: ${(error as Error).message}`);
      if (!this.revocationsLoaded) setTimeout(() => void this.reload(), 2_000).unref();
    } finally {
      if (this.heardDuringReload === heard) this.heardDuringReload = undefined;
    }
  }
}
