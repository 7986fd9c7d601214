import { Injectable } from '@nestjs/common';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import { notifyChange } from '../database/notify-change';
import type { GatewayDb } from '../database/schema';

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
const now = sql<Date>`now()`;

/** MCP sessions in PostgreSQL, so every gateway replica can serve every session. */
@Injectable()
export class SessionsStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  async insert(
    session: Omit<SessionRow, 'last_seen_at' | 'ended_at' | 'log_level'> & { client_info: unknown },
  ): Promise<void> {
    await this.db
      .insertInto('mcp_sessions')
      .values({
        id: session.id,
        agent_id: session.agent_id,
        principal: session.principal,
        channel_id: session.channel_id,
        protocol_version: session.protocol_version,
        // JSON text, so an absent value is the JSON null, as it always was.
        client_info: JSON.stringify(session.client_info ?? null),
        expires_at: session.expires_at,
        client_capabilities: JSON.stringify(session.client_capabilities ?? null),
      })
      .execute();
  }

  async find(id: string): Promise<SessionRow | undefined> {
    return this.db
      .selectFrom('mcp_sessions')
      .select([
        'id',
        'agent_id',
        'principal',
        'channel_id',
        'protocol_version',
        'expires_at',
        'last_seen_at',
        'ended_at',
        'log_level',
        'client_capabilities',
      ])
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async touch(id: string, expiresAt: Date): Promise<void> {
    await this.db
      .updateTable('mcp_sessions')
      .set({ last_seen_at: now, expires_at: expiresAt })
      .where('id', '=', id)
      .where('ended_at', 'is', null)
      .execute();
  }

  /** Set the session's log level and tell every replica's cache. */
  async setLogLevel(id: string, level: string): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.updateTable('mcp_sessions').set({ log_level: level }).where('id', '=', id).execute();
      await notifyChange('session', id).execute(tx);
    });
  }

  /** True when this call ended the session (false: already ended or unknown). Tells every replica. */
  async end(id: string): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const { numUpdatedRows } = await tx
        .updateTable('mcp_sessions')
        .set({ ended_at: now })
        .where('id', '=', id)
        .where('ended_at', 'is', null)
        .executeTakeFirst();
      if (numUpdatedRows > 0n) await notifyChange('session', id).execute(tx);
      return numUpdatedRows > 0n;
    });
  }

  /** Delete one batch of sessions that ended or expired before `before`; returns how many. */
  async purge(before: Date): Promise<number> {
    const { numDeletedRows } = await this.db
      .deleteFrom('mcp_sessions')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('mcp_sessions')
          .select('id')
          .where((eb) => eb.or([eb('expires_at', '<', before), eb('ended_at', '<', before)]))
          .limit(PURGE_BATCH),
      )
      .executeTakeFirst();
    return Number(numDeletedRows);
  }
}
