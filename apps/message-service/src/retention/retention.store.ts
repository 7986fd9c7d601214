import { Injectable } from '@nestjs/common';
import { InjectKysely } from '@mcpgw/persistence';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { MessagingDb, MessagingTables } from '../database/schema';

/** Only one replica purges at a time: it holds this advisory lock (a session lock) for the run. */
const PURGE_LOCK = 0x6d637067_7270; // "mcpg" "rp"

/** The cut-offs of one purge run, as absolute times (the database's clock: `now()` at the run's start). */
export interface PurgePolicy {
  /** A channel that held two calls or more is expired when its newest message is older than this. */
  retentionSeconds: number;
  /** A channel that held at most one call (one chat_message, its reply). */
  singleCallRetentionSeconds: number;
  /** How long an unanswered chat_message without its own budget may still be waited for. */
  waitMaxMs: number;
  /** Channels looked at (and at most deleted) per statement. */
  batch: number;
}

export interface PurgeCursor {
  /** As text: a JS Date would drop the microseconds, and the walk would read the same page again. */
  createdAt: string;
  id: string;
}

export interface BatchOutcome {
  /** Where the next batch starts; undefined: no channel old enough is left to look at. */
  next?: PurgeCursor;
  channels: number;
  messages: number;
}

/** Some margin over a message's own budget: a reply may still be on its way. */
const IN_FLIGHT_MARGIN_MS = 60_000;
/** A budget above this (a week) counts as this. */
const LONGEST_BUDGET_MS = 7 * 86_400_000;
const NO_CURSOR: PurgeCursor = { createdAt: '-infinity', id: '00000000-0000-0000-0000-000000000000' };

/**
 * Whether the channel `c` is expired: its newest message (or, with none, the
 * channel itself) is older than its retention, the short one if it held at
 * most one chat_message; and it holds no unanswered chat_message that someone
 * may still wait for (younger than its own budget, `meta.timeout_ms`, or
 * WAIT_MAX_MS, plus a margin). Every subquery follows an index on channel_id.
 */
function expired(policy: PurgePolicy, keep: string[]) {
  const waitWindow = sql`(LEAST(COALESCE((q.envelope->'meta'->>'timeout_ms')::float8, ${policy.waitMaxMs}::float8), ${LONGEST_BUDGET_MS}::float8) + ${IN_FLIGHT_MARGIN_MS}::float8) * interval '1 millisecond'`;
  return sql<boolean>`(
    COALESCE((SELECT m.created_at FROM messages m WHERE m.channel_id = c.id ORDER BY m.seq DESC LIMIT 1), c.created_at)
      < now() - CASE WHEN (SELECT count(*) FROM (SELECT 1 FROM messages m WHERE m.channel_id = c.id AND m.type = 'chat_message' LIMIT 2) two) <= 1
                     THEN ${policy.singleCallRetentionSeconds}::float8 ELSE ${policy.retentionSeconds}::float8 END * interval '1 second'
    AND NOT EXISTS (
      SELECT 1 FROM messages q
       WHERE q.channel_id = c.id AND q.type = 'chat_message' AND q.created_at > now() - ${waitWindow}
         AND NOT EXISTS (SELECT 1 FROM messages r WHERE r.channel_id = c.id AND r.type = 'agent_reply' AND r.in_reply_to = q.id))
    AND c.id <> ALL(${keep}::uuid[]))`;
}

/**
 * The SQL of retention (retention/README.md): expired channels, with their
 * messages, deleted in batches by one replica at a time.
 */
@Injectable()
export class RetentionStore {
  constructor(@InjectKysely() private readonly db: MessagingDb) {}

  /**
   * Run `purge` on one connection holding the purge lock, or return undefined
   * at once if another replica holds it. The lock ends with the run (or with the
   * connection, if the process dies).
   */
  async whileLocked<T>(purge: (db: Kysely<MessagingTables>) => Promise<T>): Promise<T | undefined> {
    return this.db.connection().execute(async (conn) => {
      const { rows } = await sql<{
        locked: boolean;
      }>`SELECT pg_try_advisory_lock(${PURGE_LOCK}::bigint) AS locked`.execute(conn);
      if (!rows[0].locked) return undefined;
      try {
        return await purge(conn);
      } finally {
        await sql`SELECT pg_advisory_unlock(${PURGE_LOCK}::bigint)`.execute(conn);
      }
    });
  }

  /**
   * One batch, in one transaction: look at the next `batch` channels old enough
   * to be expired (by creation, after `after`), lock those that are expired
   * (skipping any a writer holds), check them again under the lock (a message
   * may have arrived meanwhile), and delete them with their messages. A
   * message posted on a channel while it is being deleted waits for the lock,
   * then finds no channel (MessagesStore's insert takes the same lock first).
   */
  async purgeBatch(
    conn: Kysely<MessagingTables>,
    policy: PurgePolicy,
    after: PurgeCursor = NO_CURSOR,
    keep: string[] = [],
  ): Promise<BatchOutcome> {
    return conn.transaction().execute(async (tx) => {
      const shortest = Math.min(policy.retentionSeconds, policy.singleCallRetentionSeconds);
      const { rows: page } = await sql<{ id: string; created_at: string; expired: boolean }>`
        SELECT c.id, c.created_at::text AS created_at, ${expired(policy, keep)} AS expired
          FROM channels c
         WHERE c.created_at < now() - ${shortest}::float8 * interval '1 second'
           AND (c.created_at, c.id) > (${after.createdAt}::timestamptz, ${after.id}::uuid)
         ORDER BY c.created_at, c.id
         LIMIT ${policy.batch}::int`.execute(tx);
      const last = page.at(-1);
      const next = page.length === policy.batch && last ? { createdAt: last.created_at, id: last.id } : undefined;
      const candidates = page.filter((row) => row.expired).map((row) => row.id);
      if (candidates.length === 0) return { next, channels: 0, messages: 0 };
      // Locked, then checked again in a statement of its own: it sees every message committed before the lock.
      const { rows: locked } = await sql<{ id: string }>`
        SELECT id FROM channels WHERE id = ANY(${candidates}::uuid[]) FOR UPDATE SKIP LOCKED`.execute(tx);
      if (locked.length === 0) return { next, channels: 0, messages: 0 };
      const { rows: doomed } = await sql<{ id: string }>`
        SELECT c.id FROM channels c WHERE c.id = ANY(${locked.map((row) => row.id)}::uuid[]) AND ${expired(policy, keep)}`.execute(
        tx,
      );
      const ids = doomed.map((row) => row.id);
      if (ids.length === 0) return { next, channels: 0, messages: 0 };
      const messages = await count(tx, sql`DELETE FROM messages WHERE channel_id = ANY(${ids}::uuid[]) RETURNING 1`);
      const channels = await count(tx, sql`DELETE FROM channels WHERE id = ANY(${ids}::uuid[]) RETURNING 1`);
      return { next, channels, messages };
    });
  }
}

/** The rows a data-modifying statement touched, counted in the database. */
async function count(tx: Kysely<MessagingTables>, statement: RawBuilder<unknown>): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`WITH touched AS (${statement}) SELECT count(*)::int AS n FROM touched`.execute(tx);
  return rows[0].n;
}
