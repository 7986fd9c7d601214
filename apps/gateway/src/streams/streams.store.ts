import { Injectable } from '@nestjs/common';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import { STREAM_CHANNEL } from '../database/database';
import type { GatewayDb } from '../database/schema';

export type StreamKind = 'request' | 'listen';

export type Attached = { ok: true; kind: StreamKind; ended: boolean } | { ok: false; reason: 'unknown' | 'busy' };

const now = sql<Date>`now()`;
const later = (ms: number) => sql<Date>`now() + ${sql.lit(ms)} * interval '1 millisecond'`;

/**
 * Session streams and their events in PostgreSQL (streams/README.md). A stream
 * is attached while a connection serves it (a lease, renewed); an append
 * notifies every replica, so a resumed stream on another one hears it.
 */
@Injectable()
export class StreamStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  async open(id: string, sessionId: string, kind: StreamKind, leaseMs: number): Promise<void> {
    await this.db
      .insertInto('mcp_streams')
      .values({ id, session_id: sessionId, kind, attached_until: later(leaseMs) })
      .execute();
  }

  async append(streamId: string, seq: number, data: string): Promise<void> {
    await sql`
      WITH stored AS (
        INSERT INTO mcp_stream_events (stream_id, seq, data) VALUES (${streamId}, ${seq}, ${data}) RETURNING stream_id
      )
      SELECT pg_notify(${sql.lit(STREAM_CHANNEL)}, stream_id::text) FROM stored`.execute(this.db);
  }

  /** Drop a stream's events up to `seq` (the oldest, to keep it within its bounds), remembering it did. */
  async dropThrough(streamId: string, seq: number): Promise<void> {
    await sql`
      WITH gone AS (DELETE FROM mcp_stream_events WHERE stream_id = ${streamId} AND seq <= ${seq})
      UPDATE mcp_streams SET dropped_through = GREATEST(dropped_through, ${seq}) WHERE id = ${streamId}`.execute(
      this.db,
    );
  }

  /**
   * The stream sent its last event (a request's response): a resume replays and
   * ends. `release`: the connection ending it held it, and lets go.
   */
  async end(streamId: string, release: boolean): Promise<void> {
    const attached = release ? sql`NULL` : sql`attached_until`;
    await sql`
      WITH ended AS (
        UPDATE mcp_streams SET ended_at = now(), attached_until = ${attached}, touched_at = now()
        WHERE id = ${streamId} RETURNING id
      )
      SELECT pg_notify(${sql.lit(STREAM_CHANNEL)}, id::text) FROM ended`.execute(this.db);
  }

  /** Take the stream for a connection, if it is this session's and no live connection holds it. */
  async attach(streamId: string, sessionId: string, leaseMs: number): Promise<Attached> {
    const taken = await this.db
      .updateTable('mcp_streams')
      .set({ attached_until: later(leaseMs), touched_at: now })
      .where('id', '=', streamId)
      .where('session_id', '=', sessionId)
      .where((eb) => eb.or([eb('attached_until', 'is', null), eb('attached_until', '<', now)]))
      .returning(['kind', 'ended_at'])
      .executeTakeFirst();
    if (taken) return { ok: true, kind: taken.kind, ended: taken.ended_at !== null };
    const held = await this.db
      .selectFrom('mcp_streams')
      .select('id')
      .where('id', '=', streamId)
      .where('session_id', '=', sessionId)
      .executeTakeFirst();
    return { ok: false, reason: held ? 'busy' : 'unknown' };
  }

  async renew(streamIds: string[], leaseMs: number): Promise<void> {
    if (!streamIds.length) return;
    await this.db
      .updateTable('mcp_streams')
      .set({ attached_until: later(leaseMs), touched_at: now })
      .where('id', 'in', streamIds)
      .execute();
  }

  async detach(streamId: string): Promise<void> {
    await this.db
      .updateTable('mcp_streams')
      .set({ attached_until: null, touched_at: now })
      .where('id', '=', streamId)
      .execute();
  }

  /** Events after `seq`, oldest first, whether the stream has ended, and whether events after `seq` were dropped. */
  async since(
    streamId: string,
    seq: number,
  ): Promise<{ events: { seq: number; data: string }[]; ended: boolean; gap: boolean; exists: boolean }> {
    const [stream, events] = await Promise.all([
      this.db
        .selectFrom('mcp_streams')
        .select(['ended_at', 'dropped_through'])
        .where('id', '=', streamId)
        .executeTakeFirst(),
      this.db
        .selectFrom('mcp_stream_events')
        .select(['seq', 'data'])
        .where('stream_id', '=', streamId)
        .where('seq', '>', seq)
        .orderBy('seq')
        .limit(1000)
        .execute(),
    ]);
    return {
      events,
      ended: !!stream?.ended_at,
      exists: !!stream,
      // Events the client missed were dropped (bounds, or age): it cannot be resumed faithfully.
      gap: !!stream && stream.dropped_through > seq,
    };
  }

  /** Events past the time bound, and streams nobody used for as long. */
  async purge(ttlSeconds: number): Promise<number> {
    const cutoff = sql<Date>`now() - ${sql.lit(ttlSeconds)} * interval '1 second'`;
    await sql`
      WITH gone AS (DELETE FROM mcp_stream_events WHERE created_at < ${cutoff} RETURNING stream_id, seq)
      UPDATE mcp_streams s SET dropped_through = GREATEST(s.dropped_through, g.last)
      FROM (SELECT stream_id, max(seq) AS last FROM gone GROUP BY stream_id) g
      WHERE s.id = g.stream_id`.execute(this.db);
    const gone = await this.db
      .deleteFrom('mcp_streams')
      .where('touched_at', '<', cutoff)
      .where((eb) => eb.or([eb('attached_until', 'is', null), eb('attached_until', '<', now)]))
      .executeTakeFirst();
    return Number(gone.numDeletedRows);
  }
}
