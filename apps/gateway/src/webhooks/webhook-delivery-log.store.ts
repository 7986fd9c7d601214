import { Injectable } from '@nestjs/common';
import { InvalidRequestError, NotFoundError } from '@mcpgw/contracts';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import { OUTBOX_CHANNEL } from '../database/database';
import type { GatewayDb } from '../database/schema';
import { inScope, type WebhookScope } from './webhooks.store';

export interface AttemptView {
  started_at: string;
  duration_ms: number;
  outcome: string;
  response_code: number | null;
  error: string | null;
}

export interface DeliveryView {
  id: string;
  webhook_id: string;
  event_type: string;
  status: string;
  attempts: number;
  created_at: string;
  next_attempt_at: string | null;
  finished_at: string | null;
  last_error: string | null;
  attempt_log: AttemptView[];
}

/** Deliveries listed at most, newest first. */
const DELIVERIES_LISTED = 100;
const iso = (value: Date | null) => (value ? value.toISOString() : null);

/**
 * The delivery log of webhooks (admin CLI, management API, REST): a webhook's
 * newest deliveries with their attempts, and redelivery. A `scope` limits it to
 * one principal's own webhooks (webhooks.store.ts).
 */
@Injectable()
export class WebhookDeliveryLog {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  /** A webhook's newest deliveries, each with its attempts. */
  async deliveries(webhookId: string, scope?: WebhookScope): Promise<DeliveryView[]> {
    const hook = await this.db
      .selectFrom('webhooks')
      .select(['agent_id', 'owner'])
      .where('id', '=', webhookId)
      .executeTakeFirst();
    if (!hook || !inScope(hook, scope)) throw new NotFoundError(`no webhook ${webhookId}`);
    return this.views(webhookId);
  }

  /** A webhook's newest deliveries (or just one of them), each with its attempts. */
  private async views(webhookId: string, only?: string): Promise<DeliveryView[]> {
    let query = this.db
      .selectFrom('webhook_deliveries')
      .select([
        'id',
        'webhook_id',
        'event_type',
        'status',
        'attempts',
        'created_at',
        'next_attempt_at',
        'finished_at',
        'last_error',
      ])
      .where('webhook_id', '=', webhookId)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .limit(DELIVERIES_LISTED);
    if (only) query = query.where('id', '=', only);
    const rows = await query.execute();
    const attempts = rows.length
      ? await this.db
          .selectFrom('webhook_attempts')
          .select(['delivery_id', 'started_at', 'duration_ms', 'outcome', 'response_code', 'error'])
          .where(
            'delivery_id',
            'in',
            rows.map((row) => row.id),
          )
          .orderBy('id')
          .execute()
      : [];
    return rows.map((row) => ({
      id: row.id,
      webhook_id: row.webhook_id,
      event_type: row.event_type,
      status: row.status,
      attempts: row.attempts,
      created_at: row.created_at.toISOString(),
      next_attempt_at: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
      finished_at: iso(row.finished_at),
      last_error: row.last_error,
      attempt_log: attempts
        .filter((attempt) => attempt.delivery_id === row.id)
        .map((attempt) => ({
          started_at: attempt.started_at.toISOString(),
          duration_ms: attempt.duration_ms,
          outcome: attempt.outcome,
          response_code: attempt.response_code,
          error: attempt.error,
        })),
    }));
  }

  /**
   * Send a delivery again, with the same `webhook-id` (receivers de-duplicate
   * on it), and a fresh WEBHOOK_MAX_ATTEMPTS. Not while a replica is sending it.
   */
  async redeliver(deliveryId: string, scope?: WebhookScope): Promise<DeliveryView> {
    const found = await this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .select(['d.webhook_id', 'w.agent_id', 'w.owner', 'w.disabled_at'])
      .where('d.id', '=', deliveryId)
      .executeTakeFirst();
    if (!found || !inScope(found, scope)) throw new NotFoundError(`no delivery ${deliveryId}`);
    if (found.disabled_at) throw new InvalidRequestError(`webhook ${found.webhook_id} is disabled`);
    const updated = await this.db.transaction().execute(async (tx) => {
      const row = await tx
        .updateTable('webhook_deliveries')
        .set({
          status: 'pending',
          attempts: 0,
          next_attempt_at: sql<Date>`now()`,
          finished_at: null,
          last_error: null,
          lease_token: null,
          lease_until: null,
        })
        .where('id', '=', deliveryId)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', sql<Date>`now()`)]))
        .returning('id')
        .executeTakeFirst();
      if (row) await sql`SELECT pg_notify(${sql.lit(OUTBOX_CHANNEL)}, '')`.execute(tx);
      return row;
    });
    if (!updated) throw new InvalidRequestError(`delivery ${deliveryId} is being sent right now; try again shortly`);
    const [delivery] = await this.views(found.webhook_id, deliveryId);
    return delivery;
  }
}
