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
/** The advisory-lock class under which session inserts of one principal are serialized (the two-key space). */
const SESSION_QUOTA_LOCK = 0x5e55;
const now = sql<Date>`now()`;

/** The most resources one session may subscribe to. */
export const MAX_SESSION_RESOURCE_SUBSCRIPTIONS = 100;

/** MCP sessions in PostgreSQL, so every gateway replica can serve every session. */
@Injectable()
export class SessionsStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  /**
   * Insert the session; with `maxOpen` (> 0), only if its principal holds fewer
   * open sessions of the agent: the count and the insert run under a lock per
   * principal, so concurrent initializes on any replicas cannot overshoot.
   * False when refused.
   */
  async insert(
    session: Omit<SessionRow, 'last_seen_at' | 'ended_at' | 'log_level'> & { client_info: unknown },
    maxOpen = 0,
  ): Promise<boolean> {
    if (!maxOpen) {
      await this.insertInto(this.db, session);
      return true;
    }
    return this.db.transaction().execute(async (tx) => {
      const key = `${session.agent_id}/${session.principal}`;
      await sql`SELECT pg_advisory_xact_lock(${sql.lit(SESSION_QUOTA_LOCK)}, hashtext(${key}))`.execute(tx);
      if ((await this.countOpen(session.agent_id, session.principal, tx)) >= maxOpen) return false;
      await this.insertInto(tx, session);
      return true;
    });
  }

  /** Sessions of the principal with the agent that are neither ended nor expired. */
  async countOpen(agentId: string, principal: string, db: GatewayDb = this.db): Promise<number> {
    const row = await db
      .selectFrom('mcp_sessions')
      .select((eb) => eb.fn.countAll<string>().as('open'))
      .where('agent_id', '=', agentId)
      .where('principal', '=', principal)
      .where('ended_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return Number(row.open);
  }

  private async insertInto(
    db: GatewayDb,
    session: Omit<SessionRow, 'last_seen_at' | 'ended_at' | 'log_level'> & { client_info: unknown },
  ): Promise<void> {
    await db
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

  /**
   * resources/subscribe (`on`) or unsubscribe: the session's set of watched
   * URIs, at most MAX_SESSION_RESOURCE_SUBSCRIPTIONS (beyond that, false).
   */
  async watchResource(id: string, uri: string, on: boolean): Promise<boolean> {
    if (!on) {
      await this.db
        .updateTable('mcp_sessions')
        .set({ resource_subscriptions: sql`array_remove(resource_subscriptions, ${uri})` })
        .where('id', '=', id)
        .execute();
      return true;
    }
    const row = await this.db
      .updateTable('mcp_sessions')
      .set({
        resource_subscriptions: sql`CASE WHEN ${uri} = ANY(resource_subscriptions) THEN resource_subscriptions
          ELSE array_append(resource_subscriptions, ${uri}) END`,
      })
      .where('id', '=', id)
      .where((eb) =>
        eb.or([
          eb(sql`${uri}`, '=', eb.fn.any('resource_subscriptions')),
          eb(sql`cardinality(resource_subscriptions)`, '<', MAX_SESSION_RESOURCE_SUBSCRIPTIONS),
        ]),
      )
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Which of these sessions watch `uri`. */
  async watching(ids: string[], uri: string): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.db
      .selectFrom('mcp_sessions')
      .select('id')
      .where('id', 'in', ids)
      .where(sql<boolean>`${uri} = ANY(resource_subscriptions)`)
      .execute();
    return rows.map((row) => row.id);
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
