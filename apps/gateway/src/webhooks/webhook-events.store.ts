import { Injectable } from '@nestjs/common';
import { ASYNC_COMMIT, InjectKysely, PREPARED } from '@mcpgw/persistence';
import { sql, type RawBuilder } from 'kysely';
import { createHash } from 'node:crypto';
import { OUTBOX_CHANNEL } from '../database/database';
import type { GatewayDb } from '../database/schema';
import type { AttemptRecord, Next } from './webhook-deliveries.store';

/** An outcome, as the call path hands it over: one row, whichever webhooks hear it. */
export interface OutcomeRow {
  agentId: string;
  /** The principal whose call it was; its webhooks (and the operator's) hear it. */
  callerId: string | null;
  type: string;
  payload: string;
  /** Written leased to this replica, which sends it itself (direct send); absent: any dispatcher fans it out. */
  direct?: boolean;
  /**
   * Every webhook that hears it is failing (backing off): no notice for it. The dispatchers' poll
   * fans it out within WEBHOOK_POLL_INTERVAL_MS, many rows a statement, where a notice would wake a
   * pass per commit for deliveries that wait for the endpoint's next probe anyway.
   */
  quiet?: boolean;
  /** An A2A push event: the task whose push configs (webhooks bound to it) hear it, and no other webhook. */
  a2aTaskId?: string;
  /** Only this webhook (a push config just made: the state it starts with); absent: every one that hears it. */
  webhookId?: string;
}

/** A lease on the rows written `direct`: the writing replica's token, and how long it holds them. */
export interface DirectLease {
  token: string;
  ms: number;
}

/** An attempt a replica made for a row it held, settled with the row's fan-out (`settle`). */
export interface DirectAttempt {
  eventId: string;
  webhookId: string;
  attempt: AttemptRecord;
  next: Next;
}

/** A webhook of an enabled endpoint, as the call path's index holds it (`subscriptions`). */
export interface Subscription {
  id: string;
  agent_id: string;
  owner: string | null;
  events: string[];
  url: string;
  secret: Buffer;
  previous_secret: Buffer | null;
  previous_secret_expires_at: Date | null;
  /** Not failing (backing off): the replicas send to it directly. */
  healthy: boolean;
}

/**
 * The id of the delivery of an event to a webhook (the `webhook-id` header): a
 * function of both, so that the replica that sends a row directly and a
 * replica that fans the same row out after its lease ended name it alike, and a
 * receiver de-duplicates the two. The SQL below computes the same.
 */
export function deliveryIdOf(eventId: string, webhookId: string): string {
  return `msg_${createHash('sha256').update(`${eventId}:${webhookId}`).digest('hex').slice(0, 32)}`;
}

/**
 * The outcomes table (`webhook_events`): the call path writes one row per
 * outcome (`insertEvents`, group-committed), and each row is fanned out to
 * the deliveries of the webhooks that hear it, in the statement that deletes
 * it: by any dispatcher (`expand`), or by the replica that wrote it leased and
 * sent it directly, with the attempts it made (`settle`). Nothing is fanned out
 * twice or lost.
 */
@Injectable()
export class WebhookEventsStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  /**
   * The outbox write: one row per outcome, in one statement, with the executor
   * given (the caller's transaction, or the group commit's). Rows marked
   * `direct` are leased to `lease`; any other row not `quiet` sends a notice
   * to every dispatcher, delivered on commit. Returns the rows' ids, in order.
   */
  async insertEvents(executor: GatewayDb, rows: OutcomeRow[], lease?: DirectLease): Promise<string[]> {
    const col = <T>(pick: (r: OutcomeRow) => T) => rows.map(pick);
    const leased = (r: OutcomeRow) => lease !== undefined && r.direct === true;
    const wake = rows.some((r) => !leased(r) && r.quiet !== true);
    const { rows: result } = await sql<{ ids: string[] }>`${PREPARED}
      WITH input AS MATERIALIZED (
        SELECT nextval(pg_get_serial_sequence('webhook_events', 'id')) AS id, t.*
        FROM unnest(${col((r) => r.agentId)}::text[], ${col((r) => r.callerId)}::text[], ${col((r) => r.type)}::text[],
                    ${col((r) => r.payload)}::text[], ${col(leased)}::bool[],
                    ${col((r) => r.a2aTaskId ?? null)}::uuid[], ${col((r) => r.webhookId ?? null)}::text[])
             WITH ORDINALITY AS t(agent_id, caller_id, event_type, payload, direct, a2a_task_id, webhook_id, ord)),
      recorded AS (
        INSERT INTO webhook_events (id, agent_id, caller_id, event_type, payload, lease_token, lease_until,
                                    a2a_task_id, webhook_id)
        SELECT id, agent_id, caller_id, event_type, payload,
               CASE WHEN direct THEN ${lease?.token ?? null}::uuid END,
               CASE WHEN direct THEN now() + make_interval(secs => ${(lease?.ms ?? 0) / 1000}) END,
               a2a_task_id, webhook_id
        FROM input)
      SELECT (SELECT array_agg(id::text ORDER BY ord) FROM input) AS ids,
             CASE WHEN ${wake}::bool THEN pg_notify(${sql.lit(OUTBOX_CHANNEL)}, '') END AS notified`.execute(executor);
    return result[0].ids;
  }

  /**
   * Fan up to `limit` outcomes out to deliveries: rows nobody holds (written
   * for any dispatcher, or whose direct lease ended). Returns how many it took.
   */
  async expand(limit: number): Promise<number> {
    const taken = sql`
      DELETE FROM webhook_events WHERE id IN (
        SELECT id FROM webhook_events WHERE lease_until IS NULL OR lease_until < now()
        ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING id, agent_id, caller_id, event_type, payload, a2a_task_id, webhook_id`;
    return (await this.fanOut(taken, [])).size;
  }

  /**
   * Rows this replica held and sent directly: fanned out like `expand`, the
   * deliveries it attempted recorded with their attempts (delivered, failed,
   * or pending again), any other webhook that hears them pending. Only rows
   * still under `token`: one whose lease ended and another replica took is not
   * recorded twice. Returns the event ids settled.
   */
  async settle(token: string, attempts: DirectAttempt[]): Promise<Set<string>> {
    const ids = [...new Set(attempts.map((a) => a.eventId))];
    const taken = sql`
      DELETE FROM webhook_events WHERE id = ANY (${ids}::bigint[]) AND lease_token = ${token}::uuid
      RETURNING id, agent_id, caller_id, event_type, payload, a2a_task_id, webhook_id`;
    return this.fanOut(taken, attempts);
  }

  /** Rows this replica held but will not send (it is stopping, or has no room): any dispatcher's now. */
  async release(token: string, ids: string[]): Promise<void> {
    await sql`${PREPARED}
      WITH released AS (
        UPDATE webhook_events SET lease_token = NULL, lease_until = NULL
        WHERE id = ANY (${ids}::bigint[]) AND lease_token = ${token}::uuid RETURNING 1)
      SELECT CASE WHEN count(*) > 0 THEN pg_notify(${sql.lit(OUTBOX_CHANNEL)}, '') END FROM released`.execute(this.db);
  }

  /**
   * The enabled webhooks (all agents, or one), with what a direct send needs. Not the A2A push
   * configs: one per task, they are many, and their events go to the dispatcher (`pushAgents`).
   */
  async subscriptions(agentId?: string): Promise<Subscription[]> {
    let query = this.db
      .selectFrom('webhooks')
      .select([
        'id',
        'agent_id',
        'owner',
        'events',
        'url',
        'secret',
        'previous_secret',
        'previous_secret_expires_at',
        sql<boolean>`failing_since IS NULL`.as('healthy'),
      ])
      .where('disabled_at', 'is', null)
      .where('a2a_task_id', 'is', null);
    if (agentId) query = query.where('agent_id', '=', agentId);
    return query.execute();
  }

  /** The agents (all, or this one) with an enabled A2A push config: the dispatcher polls while there are any. */
  async pushAgents(agentId?: string): Promise<string[]> {
    let query = this.db
      .selectFrom('webhooks')
      .select('agent_id')
      .distinct()
      .where('disabled_at', 'is', null)
      .where('a2a_task_id', 'is not', null);
    if (agentId) query = query.where('agent_id', '=', agentId);
    return (await query.execute()).map((row) => row.agent_id);
  }

  /**
   * The fan-out of the rows `taken` deletes: one delivery per row and webhook
   * that hears it (enabled, subscribed to the type, the operator's or the
   * caller's own), its id `deliveryIdOf`; those in `attempts` with their
   * outcome and the attempt logged. One statement. Returns the rows' ids.
   *
   * Committed without waiting for the disk (`ASYNC_COMMIT`): lost in a crash
   * of PostgreSQL, the rows it took come back, leased or not, and are fanned
   * out and sent again when their lease ends, with the same delivery ids.
   */
  private async fanOut(taken: RawBuilder<unknown>, attempts: DirectAttempt[]): Promise<Set<string>> {
    const col = <T>(pick: (a: DirectAttempt) => T) => attempts.map(pick);
    const { rows } = await sql<{ id: string }>`${PREPARED}
      WITH taken AS (${taken}),
      r AS (
        SELECT * FROM unnest(
          ${col((a) => a.eventId)}::bigint[], ${col((a) => a.webhookId)}::text[], ${col((a) => a.next.status)}::text[],
          ${col((a) => (a.next.status === 'delivered' ? null : a.next.error))}::text[],
          ${col((a) => a.attempt.startedAt.toISOString())}::timestamptz[], ${col((a) => a.attempt.durationMs)}::int[],
          ${col((a) => a.attempt.outcome)}::text[], ${col((a) => a.attempt.responseCode)}::int[],
          ${col((a) => a.attempt.error)}::text[], ${col((a) => a.attempt.replica)}::text[])
          AS r(event_id, webhook_id, status, error, started_at, duration_ms, outcome, response_code, attempt_error, replica)),
      heard AS (
        SELECT e.id AS event_id, e.event_type, e.payload, w.id AS webhook_id,
               'msg_' || left(encode(sha256(convert_to(e.id::text || ':' || w.id, 'UTF8')), 'hex'), 32) AS delivery_id
        FROM taken e
        JOIN webhooks w ON w.agent_id = e.agent_id AND w.disabled_at IS NULL AND e.event_type = ANY (w.events)
                       AND (w.owner IS NULL OR w.owner = e.caller_id)
                       -- A push config hears its task's events only; a push event, its task's configs only.
                       AND (w.a2a_task_id IS NULL OR w.a2a_task_id = e.a2a_task_id)
                       AND (e.webhook_id IS NULL OR w.id = e.webhook_id)),
      fanned AS (
        INSERT INTO webhook_deliveries (id, webhook_id, event_type, payload, status, attempts, last_error, finished_at)
        SELECT h.delivery_id, h.webhook_id, h.event_type, h.payload, coalesce(r.status, 'pending'),
               CASE WHEN r.event_id IS NULL THEN 0 ELSE 1 END, r.error,
               CASE WHEN coalesce(r.status, 'pending') = 'pending' THEN NULL ELSE now() END
        FROM heard h LEFT JOIN r ON r.event_id = h.event_id AND r.webhook_id = h.webhook_id
        ORDER BY h.event_id
        RETURNING id),
      logged AS (
        INSERT INTO webhook_attempts (delivery_id, started_at, duration_ms, outcome, response_code, error, replica)
        SELECT f.id, r.started_at, r.duration_ms, r.outcome, r.response_code, r.attempt_error, r.replica
        FROM r JOIN heard h ON h.event_id = r.event_id AND h.webhook_id = r.webhook_id
        JOIN fanned f ON f.id = h.delivery_id
        RETURNING 1)
      SELECT id::text, ${ASYNC_COMMIT} AS async_commit FROM taken`.execute(this.db);
    return new Set(rows.map((row) => row.id));
  }
}
