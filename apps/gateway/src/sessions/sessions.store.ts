import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { notifySql } from '../cache/cache-invalidation.service';

export interface SessionRow {
  id: string;
  agent_id: string;
  principal: string;
  channel_id: string;
  protocol_version: string;
  expires_at: Date;
  last_seen_at: Date;
  ended_at: Date | null;
  log_level: string | null;
  client_capabilities: Record<string, unknown> | null;
}

const PURGE_BATCH = 1000;

/** MCP sessions in PostgreSQL, so every gateway replica can serve every session. */
@Injectable()
export class SessionsStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(session: Omit<SessionRow, 'last_seen_at' | 'ended_at' | 'log_level'> & { client_info: unknown }): Promise<void> {
    await this.db.query(
      `INSERT INTO mcp_sessions (id, agent_id, principal, channel_id, protocol_version, client_info, expires_at, client_capabilities)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        session.id,
        session.agent_id,
        session.principal,
        session.channel_id,
        session.protocol_version,
        JSON.stringify(session.client_info ?? null),
        session.expires_at,
        JSON.stringify(session.client_capabilities ?? null),
      ],
    );
  }

  async find(id: string): Promise<SessionRow | undefined> {
    const [row] = await this.db.query(
      `SELECT id, agent_id, principal, channel_id, protocol_version, expires_at, last_seen_at, ended_at, log_level,
              client_capabilities
         FROM mcp_sessions WHERE id = $1`,
      [id],
    );
    return row;
  }

  async touch(id: string, expiresAt: Date): Promise<void> {
    await this.db.query(
      `UPDATE mcp_sessions SET last_seen_at = now(), expires_at = $2 WHERE id = $1 AND ended_at IS NULL`,
      [id, expiresAt],
    );
  }

  /** Set the session's log level and tell every replica's cache. */
  async setLogLevel(id: string, level: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query(`UPDATE mcp_sessions SET log_level = $2 WHERE id = $1`, [id, level]);
      await tx.query(notifySql('session'), [id]);
    });
  }

  /** True when this call ended the session (false: already ended or unknown). Tells every replica. */
  async end(id: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const [, affected]: [unknown, number] = await tx.query(
        `UPDATE mcp_sessions SET ended_at = now() WHERE id = $1 AND ended_at IS NULL`,
        [id],
      );
      if (affected > 0) await tx.query(notifySql('session'), [id]);
      return affected > 0;
    });
  }

  /** Delete one batch of sessions that ended or expired before `before`; returns how many. */
  async purge(before: Date): Promise<number> {
    const [, affected]: [unknown, number] = await this.db.query(
      `DELETE FROM mcp_sessions WHERE id IN (
         SELECT id FROM mcp_sessions WHERE expires_at < $1 OR ended_at < $1 LIMIT ${PURGE_BATCH})`,
      [before],
    );
    return affected;
  }
}
