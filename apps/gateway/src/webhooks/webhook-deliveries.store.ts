import { Injectable } from '@nestjs/common';
import { ASYNC_COMMIT, InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import { notifyChange } from '../database/notify-change';
import type { GatewayDb } from '../database/schema';

const PURGE_BATCH = 1000;

/** A delivery a replica claimed: what to send, where, and with which (encrypted) secrets. */
export interface ClaimedDelivery {
  id: string;
  webhook_id: string;
  agent_id: string;
  url: string;
  payload: string;
  /** Attempts made before this one. */
  attempts: number;
  secret: Buffer;
  previous_secret: Buffer | null;
  previous_secret_expires_at: Date | null;
  /** Its endpoint was failing: this attempt is the probe. */
  probe: boolean;
  /** An A2A push config's sealed headers (its `authentication` and `token`); absent for a webhook. */
  a2a_headers?: Buffer | null;
}

export interface AttemptRecord {
  startedAt: Date;
  durationMs: number;
  /** delivered, retry, failed, gone (410), refused (SSRF) */
  outcome: string;
  responseCode: number | null;
  error: string | null;
  replica: string;
}

/** What becomes of the delivery after an attempt. */
export type Next =
  | { status: 'delivered' }
  | { status: 'failed'; error: string }
  | { status: 'pending'; retryInMs: number; error: string };

/** One attempt's outcome, recorded with others in one statement (`finishMany`). */
export interface FinishedAttempt {
  id: string;
  token: string;
  attempt: AttemptRecord;
  next: Next;
}

/** What the dispatcher reads of its backlog, for /metrics. */
export interface Backlog {
  /** Outcomes not yet fanned out to deliveries. */
  events: number;
  /** Deliveries waiting to be sent, and the age of the oldest, in seconds (0 when none). */
  pending: number;
  oldestPendingSeconds: number;
  failingEndpoints: number;
  disabledEndpoints: number;
}

/**
 * The deliveries of the outbox (the outcomes they come from: webhook-events.store.ts).
 * The dispatcher claims due deliveries with `FOR UPDATE SKIP
 * LOCKED` (replicas claiming at once get different rows) under a lease token,
 * and records their attempts many at a time (`finishMany`), only under the
 * same token. An endpoint whose attempts fail backs off as a whole
 * (`endpointFailed`): while it does, nothing of it is claimed, and then one
 * delivery only (the probe) until one gets through (`endpointRecovered`).
 */
@Injectable()
export class WebhookDeliveriesStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  /**
   * Lease up to `limit` due deliveries: at most `perEndpoint` of a healthy
   * endpoint, one of a failing endpoint whose next probe is due (and that
   * probe's time is pushed past the lease, so no other replica probes it too),
   * none of an endpoint backing off. Endpoints being claimed by another
   * replica at this instant are skipped (their row is locked).
   */
  async claim(token: string, limit: number, perEndpoint: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    const lease = sql`make_interval(secs => ${leaseMs / 1000})`;
    const { rows } = await sql<ClaimedDelivery>`
      WITH picked AS (
        SELECT due.id, hook.id AS webhook_id, hook.failing_since IS NOT NULL AS probe
        FROM webhooks hook
        CROSS JOIN LATERAL (
          SELECT d.id FROM webhook_deliveries d
          WHERE d.webhook_id = hook.id AND d.status = 'pending' AND d.next_attempt_at <= now()
            AND (d.lease_until IS NULL OR d.lease_until < now())
          ORDER BY d.next_attempt_at
          LIMIT CASE WHEN hook.failing_since IS NULL THEN ${perEndpoint} ELSE 1 END
          FOR UPDATE OF d SKIP LOCKED) due
        WHERE hook.disabled_at IS NULL AND (hook.retry_at IS NULL OR hook.retry_at <= now())
        LIMIT ${limit}
        FOR UPDATE OF hook SKIP LOCKED),
      probing AS (
        UPDATE webhooks SET retry_at = now() + ${lease}
        WHERE id IN (SELECT webhook_id FROM picked WHERE probe))
      UPDATE webhook_deliveries d
      SET lease_token = ${token}::uuid, lease_until = now() + ${lease}
      FROM webhooks w
      WHERE w.id = d.webhook_id AND d.id IN (SELECT id FROM picked)
      RETURNING d.id, d.webhook_id, w.agent_id, w.url, d.payload, d.attempts,
                w.secret, w.previous_secret, w.previous_secret_expires_at,
                w.failing_since IS NOT NULL AS probe, w.a2a_headers`.execute(this.db);
    return rows;
  }

  /**
   * Record many attempts and what follows each, in one statement: only those
   * whose lease is still the recorder's (it always is unless an attempt
   * outlived WEBHOOK_LEASE_MS). Returns the ids recorded. Committed without
   * waiting for the disk (`ASYNC_COMMIT`): a record lost in a crash of
   * PostgreSQL leaves its delivery leased, and it is sent again when the
   * lease ends (at least once, same `webhook-id`).
   */
  async finishMany(done: FinishedAttempt[]): Promise<Set<string>> {
    if (done.length === 0) return new Set();
    const col = <T>(pick: (f: FinishedAttempt) => T) => done.map(pick);
    const { rows } = await sql<{ id: string }>`
      WITH r AS (
        SELECT * FROM unnest(
          ${col((f) => f.id)}::text[], ${col((f) => f.token)}::uuid[], ${col((f) => f.next.status)}::text[],
          ${col((f) => (f.next.status === 'delivered' ? null : f.next.error))}::text[],
          ${col((f) => (f.next.status === 'pending' ? f.next.retryInMs : 0))}::float8[],
          ${col((f) => f.attempt.startedAt.toISOString())}::timestamptz[], ${col((f) => f.attempt.durationMs)}::int[],
          ${col((f) => f.attempt.outcome)}::text[], ${col((f) => f.attempt.responseCode)}::int[],
          ${col((f) => f.attempt.error)}::text[], ${col((f) => f.attempt.replica)}::text[])
          AS r(id, token, status, error, retry_ms, started_at, duration_ms, outcome, response_code, attempt_error, replica)),
      updated AS (
        UPDATE webhook_deliveries d
        SET attempts = d.attempts + 1, status = s.status, lease_token = NULL, lease_until = NULL,
            last_error = r.error,
            finished_at = CASE WHEN s.status = 'pending' THEN NULL ELSE now() END,
            next_attempt_at = CASE WHEN s.status = 'pending' THEN now() + r.retry_ms * interval '1 millisecond'
                                   ELSE d.next_attempt_at END
        FROM r JOIN webhooks w ON true
        -- A retry of a webhook disabled meanwhile (by this very attempt, or a 410 of another) has ended.
        CROSS JOIN LATERAL (SELECT CASE WHEN r.status = 'pending' AND w.disabled_at IS NOT NULL THEN 'failed'
                                        ELSE r.status END AS status) s
        WHERE d.id = r.id AND d.lease_token = r.token AND w.id = d.webhook_id
        RETURNING d.id),
      logged AS (
        INSERT INTO webhook_attempts (delivery_id, started_at, duration_ms, outcome, response_code, error, replica)
        SELECT r.id, r.started_at, r.duration_ms, r.outcome, r.response_code, r.attempt_error, r.replica
        FROM r JOIN updated u ON u.id = r.id
        RETURNING 1)
      SELECT id, ${ASYNC_COMMIT} AS async_commit FROM updated`.execute(this.db);
    return new Set(rows.map((row) => row.id));
  }

  /**
   * An attempt to the endpoint failed and may be retried: the endpoint backs
   * off as a whole (exponential from `baseMs` per failed step, capped at
   * `maxMs`, equal jitter, at least `retryAfterMs`), and is disabled once it
   * has failed for `disableAfterSeconds`. One step per backoff: the other
   * attempts that were in flight when it went down fail into the same step;
   * a probe's failure always takes the next. Returns the disabling reason.
   */
  async endpointFailed(
    webhookId: string,
    probe: boolean,
    error: string,
    backoff: { baseMs: number; maxMs: number; retryAfterMs: number },
    disableAfterSeconds: number,
  ): Promise<{ disabled?: string }> {
    const stepping = probe ? sql`true` : sql`(retry_at IS NULL OR retry_at <= now())`;
    const next = sql`now() + make_interval(secs => greatest(
      least(${backoff.baseMs}::float8 * power(2, least(failures, 30)), ${backoff.maxMs}::float8)
        * (0.5 + random() / 2), ${backoff.retryAfterMs}::float8) / 1000)`;
    return this.db.transaction().execute(async (tx) => {
      const { rows } = await sql<{ agent_id: string; failing_since: Date; expired: boolean; started: boolean }>`
        UPDATE webhooks SET
          failing_since = coalesce(failing_since, now()),
          failures = CASE WHEN ${stepping} THEN failures + 1 ELSE failures END,
          retry_at = CASE WHEN ${stepping} THEN ${next} ELSE retry_at END,
          last_error = ${error}
        WHERE id = ${webhookId} AND disabled_at IS NULL
        RETURNING agent_id, failing_since, failing_since = now() AS started,
                  failing_since <= now() - make_interval(secs => ${disableAfterSeconds}) AS expired`.execute(tx);
      const updated = rows[0];
      // It has just started failing: every replica's index learns it (they stop sending it directly).
      if (updated?.started) await notifyChange('webhook', updated.agent_id).execute(tx);
      if (!updated?.expired) return {};
      const reason = `failing since ${updated.failing_since.toISOString()} (last: ${error}); disabled after ${disableAfterSeconds} s`;
      await this.disableIn(tx, webhookId, updated.agent_id, reason);
      return { disabled: reason };
    });
  }

  /** An attempt got through to an endpoint that was failing: it is healthy again (true when it was failing). */
  async endpointRecovered(webhookId: string): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const recovered = await tx
        .updateTable('webhooks')
        .set({ failing_since: null, failures: 0, retry_at: null, last_error: null })
        .where('id', '=', webhookId)
        .where('failing_since', 'is not', null)
        .returning('agent_id')
        .executeTakeFirst();
      // Every replica's index learns it: they send to it directly again.
      if (recovered) await notifyChange('webhook', recovered.agent_id).execute(tx);
      return recovered !== undefined;
    });
  }

  /** The backlog, for /metrics (one statement). */
  async backlog(): Promise<Backlog> {
    const { rows } = await sql<Backlog>`
      SELECT (SELECT count(*) FROM webhook_events)::int AS events,
             p.pending::int AS pending,
             coalesce(extract(epoch FROM now() - p.oldest), 0)::float8 AS "oldestPendingSeconds",
             (SELECT count(*) FROM webhooks WHERE failing_since IS NOT NULL AND disabled_at IS NULL)::int
               AS "failingEndpoints",
             (SELECT count(*) FROM webhooks WHERE disabled_at IS NOT NULL)::int AS "disabledEndpoints"
      FROM (SELECT count(*) AS pending, min(created_at) AS oldest
            FROM webhook_deliveries WHERE status = 'pending') p`.execute(this.db);
    return rows[0];
  }

  /** Delete one batch of finished deliveries older than the retention (attempts go with them); returns how many. */
  async purgeFinished(retentionSeconds: number): Promise<number> {
    const { numAffectedRows } = await sql`
      DELETE FROM webhook_deliveries WHERE id IN (
        SELECT id FROM webhook_deliveries
        WHERE status <> 'pending' AND finished_at < now() - make_interval(secs => ${retentionSeconds})
        LIMIT ${sql.lit(PURGE_BATCH)})`.execute(this.db);
    return Number(numAffectedRows ?? 0);
  }

  /**
   * Deliveries still pending after the retention window (their endpoint never
   * came back, and was not disabled yet) fail as expired, a batch at a time;
   * returns how many.
   */
  async expirePending(retentionSeconds: number): Promise<number> {
    const { numAffectedRows } = await sql`
      UPDATE webhook_deliveries SET status = 'failed', finished_at = now(),
        last_error = 'expired: still pending after WEBHOOK_RETENTION_SECONDS'
      WHERE id IN (
        SELECT id FROM webhook_deliveries
        WHERE status = 'pending' AND created_at < now() - make_interval(secs => ${retentionSeconds})
          AND (lease_until IS NULL OR lease_until < now())
        LIMIT ${sql.lit(PURGE_BATCH)})`.execute(this.db);
    return Number(numAffectedRows ?? 0);
  }

  /** The receiver answered 410 Gone (or failed too long): the webhook is disabled, its pending deliveries failed. */
  async disable(webhookId: string, agentId: string, reason: string): Promise<void> {
    await this.db.transaction().execute((tx) => this.disableIn(tx, webhookId, agentId, reason));
  }

  private async disableIn(tx: GatewayDb, webhookId: string, agentId: string, reason: string): Promise<void> {
    await tx
      .updateTable('webhooks')
      .set({ disabled_at: sql<Date>`now()`, disabled_reason: reason, retry_at: null })
      .where('id', '=', webhookId)
      .where('disabled_at', 'is', null)
      .execute();
    await tx
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', finished_at: sql<Date>`now()`, last_error: reason })
      .where('webhook_id', '=', webhookId)
      .where('status', '=', 'pending')
      .execute();
    await notifyChange('webhook', agentId).execute(tx);
  }
}
