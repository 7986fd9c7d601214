import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { BusPattern } from '@mcpgw/contracts';
import { BusClient } from '@mcpgw/bus';
import { randomBytes } from 'node:crypto';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { SessionsStore, type SessionRow } from './sessions.store';

export interface McpSession {
  id: string;
  agentId: string;
  principal: string;
  /** The IM channel every call of this session shares (multi-turn). */
  channelId: string;
  protocolVersion: string;
}

export type SessionLookup = { ok: true; session: McpSession } | { ok: false; reason: string };

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
  private purgeTimer?: NodeJS.Timeout;

  constructor(
    private readonly store: SessionsStore,
    private readonly bus: BusClient,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  onApplicationBootstrap(): void {
    this.purgeTimer = setInterval(() => void this.purgeOld(), PURGE_EVERY_MS).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.purgeTimer);
  }

  async create(agentId: string, principal: string, protocolVersion: string, clientInfo: unknown): Promise<McpSession> {
    const channel = await this.bus.request(BusPattern.CreateChannel, { agent_id: agentId });
    const session: McpSession = {
      id: randomBytes(24).toString('base64url'),
      agentId,
      principal,
      channelId: channel.id,
      protocolVersion,
    };
    await this.store.insert({
      id: session.id,
      agent_id: agentId,
      principal,
      channel_id: channel.id,
      protocol_version: protocolVersion,
      client_info: clientInfo,
      expires_at: this.expiry(),
    });
    return session;
  }

  async resume(id: string, agentId: string, principal: string): Promise<SessionLookup> {
    const row = id.length <= 128 ? await this.store.find(id) : undefined;
    if (!row || row.agent_id !== agentId || row.principal !== principal) return { ok: false, reason: 'unknown session' };
    if (row.ended_at) return { ok: false, reason: 'session ended' };
    if (row.expires_at.getTime() <= Date.now()) return { ok: false, reason: 'session expired' };
    if (Date.now() - row.last_seen_at.getTime() > TOUCH_EVERY_MS) {
      this.store.touch(id, this.expiry()).catch((error) => this.logger.warn(`session touch: ${error.message}`));
    }
    return { ok: true, session: toSession(row) };
  }

  async end(id: string, agentId: string, principal: string): Promise<boolean> {
    const found = await this.resume(id, agentId, principal);
    return found.ok && (await this.store.end(id));
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
  };
}
