import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { BusPattern, type LogLevel } from '@mcpgw/contracts';
import { BusClient } from '@mcpgw/bus';
import { randomBytes } from 'node:crypto';
import { CacheInvalidationService } from '../cache/cache-invalidation.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { SessionsStore, type SessionRow } from './sessions.store';

export interface McpSession {
  id: string;
  agentId: string;
  principal: string;
  /** The IM channel every call of this session shares (multi-turn). */
  channelId: string;
  protocolVersion: string;
  /** From logging/setLevel: agent log lines below it are not relayed. */
  logLevel?: LogLevel;
  /** The client can answer sampling or elicitation requests (declared at initialize). */
  answersClientRequests: boolean;
}

export type SessionLookup = { ok: true; session: McpSession } | { ok: false; reason: string };

/** How long a session row is served from memory (ends invalidate it at once). */
const SESSION_CACHE_MS = 30_000;
const SESSION_CACHE_MAX = 100_000;
/** Refresh `expires_at` at most this often per session, not on every request. */
const TOUCH_EVERY_MS = 60_000;
const PURGE_EVERY_MS = 10 * 60_000;
/** Ended and expired sessions stay this long (for diagnosis) before they are purged. */
const KEEP_ENDED_MS = 24 * 3600_000;

/**
 * MCP sessions: created at `initialize` with their own IM channel, ended by
 * DELETE, expired after SESSION_TTL_SECONDS idle. A session belongs to one agent
 * and one caller; presenting it with another key is the same as an unknown id.
 */
@Injectable()
export class SessionsService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SessionsService.name);
  private readonly cache = new Map<string, { row: SessionRow; until: number }>();
  private purgeTimer?: NodeJS.Timeout;

  constructor(
    private readonly store: SessionsStore,
    private readonly bus: BusClient,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
    invalidation: CacheInvalidationService,
  ) {
    invalidation.on('session', (id) => (id ? this.cache.delete(id) : this.cache.clear()));
  }

  onApplicationBootstrap(): void {
    this.purgeTimer = setInterval(() => void this.purgeOld(), PURGE_EVERY_MS).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.purgeTimer);
  }

  /**
   * A new session, unless the principal already holds `maxOpen` open ones
   * (not ended, not expired; 0: no limit): then undefined. Counted in
   * PostgreSQL, where sessions live, so the limit is exact across replicas.
   */
  async create(
    agentId: string,
    principal: string,
    protocolVersion: string,
    clientInfo: unknown,
    clientCapabilities: Record<string, unknown> = {},
    maxOpen = 0,
  ): Promise<McpSession | undefined> {
    // Over its quota of open sessions: refused before a channel is made (the insert checks again, exactly).
    if (maxOpen && (await this.store.countOpen(agentId, principal)) >= maxOpen) return undefined;
    const channel = await this.bus.request(BusPattern.CreateChannel, { agent_id: agentId });
    const session: McpSession = {
      id: randomBytes(24).toString('base64url'),
      agentId,
      principal,
      channelId: channel.id,
      protocolVersion,
      answersClientRequests: answersClientRequests(clientCapabilities),
    };
    const inserted = await this.store.insert(
      {
        id: session.id,
        agent_id: agentId,
        principal,
        channel_id: channel.id,
        protocol_version: protocolVersion,
        client_info: clientInfo,
        client_capabilities: clientCapabilities,
        expires_at: this.expiry(),
      },
      maxOpen,
    );
    return inserted ? session : undefined;
  }

  async resume(id: string, agentId: string, principal: string): Promise<SessionLookup> {
    let row = id.length <= 128 ? await this.read(id) : undefined;
    // A cached row may lag another replica's sliding expiry: check the database before refusing.
    if (row && row.expires_at.getTime() <= Date.now()) row = await this.read(id, true);
    if (!row || row.agent_id !== agentId || row.principal !== principal)
      return { ok: false, reason: 'unknown session' };
    if (row.ended_at) return { ok: false, reason: 'session ended' };
    if (row.expires_at.getTime() <= Date.now()) return { ok: false, reason: 'session expired' };
    if (Date.now() - row.last_seen_at.getTime() > TOUCH_EVERY_MS) {
      row.last_seen_at = new Date();
      row.expires_at = this.expiry();
      this.store.touch(id, row.expires_at).catch((error) => this.logger.warn(`session touch: ${error.message}`));
    }
    return { ok: true, session: toSession(row) };
  }

  async setLogLevel(session: McpSession, level: LogLevel): Promise<void> {
    this.cache.delete(session.id);
    await this.store.setLogLevel(session.id, level);
  }

  /** resources/subscribe or unsubscribe of the session; false when it already watches the most it may. */
  watchResource(session: McpSession, uri: string, on: boolean): Promise<boolean> {
    return this.store.watchResource(session.id, uri, on);
  }

  /** Which of these sessions subscribed to `uri` (their GET streams hear its updates). */
  watching(sessionIds: string[], uri: string): Promise<string[]> {
    return this.store.watching(sessionIds, uri);
  }

  async end(id: string, agentId: string, principal: string): Promise<boolean> {
    const found = await this.resume(id, agentId, principal);
    this.cache.delete(id);
    return found.ok && (await this.store.end(id));
  }

  /**
   * Session rows are cached briefly; an ended session is dropped from every
   * replica's cache through PostgreSQL NOTIFY, sent in the ending transaction.
   */
  private async read(id: string, fresh = false): Promise<SessionRow | undefined> {
    const cached = this.cache.get(id);
    if (!fresh && cached && cached.until > Date.now()) return cached.row;
    const row = await this.store.find(id);
    if (row && !row.ended_at) {
      if (this.cache.size >= SESSION_CACHE_MAX) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(id, { row, until: Date.now() + SESSION_CACHE_MS });
    } else {
      this.cache.delete(id);
    }
    return row;
  }

  private expiry(): Date {
    return new Date(Date.now() + this.env.SESSION_TTL_SECONDS * 1000);
  }

  private async purgeOld(): Promise<void> {
    try {
      const before = new Date(Date.now() - KEEP_ENDED_MS);
      let purged = 0;
      for (let n = await this.store.purge(before); n > 0; n = await this.store.purge(before)) purged += n;
      if (purged) this.logger.log({ msg: 'purged old sessions', purged });
    } catch (error) {
      this.logger.warn(`session purge: ${(error as Error).message}`);
    }
  }
}

function toSession(row: SessionRow): McpSession {
  return {
    id: row.id,
    agentId: row.agent_id,
    principal: row.principal,
    channelId: row.channel_id,
    protocolVersion: row.protocol_version,
    ...(row.log_level ? { logLevel: row.log_level as LogLevel } : {}),
    answersClientRequests: answersClientRequests(row.client_capabilities ?? {}),
  };
}

function answersClientRequests(capabilities: Record<string, unknown>): boolean {
  return capabilities.sampling !== undefined || capabilities.elicitation !== undefined;
}
