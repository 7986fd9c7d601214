import { Injectable } from '@nestjs/common';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import { OUTBOX_CHANNEL } from '../database/database';
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

/**
 * The dispatcher's side of the outbox. A claim takes due rows with `FOR UPDATE
 * SKIP LOCKED` (replicas claiming at once get different rows) and leases them
 * under a token: only the holder of the token records the outcome, and a row
 * whose holder died is claimed again once its lease ends.
 */
@Injectable()
export class WebhookDeliveriesStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  /**
   * The outbox write: one row per enabled webhook of the agent subscribed to
   * the type, and a notice to every dispatcher, delivered on commit. One
   * statement, one round trip, with the executor given (the caller's transaction).
   */
  async insertEvent(executor: GatewayDb, agentId: string, type: string, payload: string): Promise<number> {
    const { rows } = await sql<{ recorded: number }>`
      WITH recorded AS (
        INSERT INTO webhook_deliveries (id, webhook_id, event_type, payload)
        SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), w.id, ${type}, ${payload}
        FROM webhooks w
        WHERE w.agent_id = ${agentId} AND w.disabled_at IS NULL AND ${type} = ANY (w.events)
        RETURNING 1)
      SELECT count(*)::int AS recorded,
             CASE WHEN count(*) > 0 THEN pg_notify(${sql.lit(OUTBOX_CHANNEL)}, '') END AS notified
      FROM recorded`.execute(executor);
    return rows[0]?.recorded ?? 0;
  }

  /** The event types of enabled webhooks, per agent (all agents, or one). */
  async subscriptions(agentId?: string): Promise<{ agent_id: string; events: string[] }[]> {
    let query = this.db.selectFrom('webhooks').select(['agent_id', 'events']).where('disabled_at', 'is', null);
    if (agentId) query = query.where('agent_id', '=', agentId);
    return query.execute();
  }

  async claim(token: string, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    const { rows } = await sql<ClaimedDelivery>`
      UPDATE webhook_deliveries d
      SET lease_token = ${token}::uuid, lease_until = now() + make_interval(secs => ${leaseMs / 1000})
      FROM webhooks w
      WHERE w.id = d.webhook_id AND d.id IN (
        SELECT due.id FROM webhook_deliveries due
        JOIN webhooks hook ON hook.id = due.webhook_id AND hook.disabled_at IS NULL
        WHERE due.status = 'pending' AND due.next_attempt_at <= now()
          AND (due.lease_until IS NULL OR due.lease_until < now())
        ORDER BY due.next_attempt_at
        LIMIT ${limit}
        FOR UPDATE OF due SKIP LOCKED)
      RETURNING d.id, d.webhook_id, w.agent_id, w.url, d.payload, d.attempts,
                w.secret, w.previous_secret, w.previous_secret_expires_at`.execute(this.db);
    return rows;
  }

  /**
   * Record the attempt and what follows, if the lease is still this replica's
   * (it always is unless an attempt outlived WEBHOOK_LEASE_MS). False when not.
   */
  async finish(id: string, token: string, attempt: AttemptRecord, next: Next): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const updated = await tx
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          attempts: eb('attempts', '+', 1),
          status: next.status,
          lease_token: null,
          lease_until: null,
          last_error: next.status === 'delivered' ? null : next.error,
          finished_at: next.status === 'pending' ? null : sql<Date>`now()`,
          next_attempt_at:
            next.status === 'pending'
              ? sql<Date>`now() + make_interval(secs => ${next.retryInMs / 1000})`
              : eb.ref('next_attempt_at'),
        }))
        .where('id', '=', id)
        .where('lease_token', '=', token)
        .returning('id')
        .executeTakeFirst();
      if (!updated) return false;
      await tx
        .insertInto('webhook_attempts')
        .values({
          delivery_id: id,
          started_at: attempt.startedAt,
          duration_ms: attempt.durationMs,
          outcome: attempt.outcome,
          response_code: attempt.responseCode,
          error: attempt.error,
          replica: attempt.replica,
        })
        .execute();
      return true;
    });
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

  /** The receiver answered 410 Gone: the webhook is disabled, its pending deliveries failed. */
  async disable(webhookId: string, agentId: string, reason: string): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx
        .updateTable('webhooks')
        .set({ disabled_at: sql<Date>`now()`, disabled_reason: reason })
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
    });
  }
}
