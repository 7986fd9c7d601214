import { Inject, Injectable } from '@nestjs/common';
import { InvalidRequestError, NotFoundError } from '@mcpgw/contracts';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import { randomBytes } from 'node:crypto';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { notifyChange } from '../database/notify-change';
import type { GatewayDb } from '../database/schema';
import { WEBHOOK_EVENT_TYPES, isWebhookEventType } from './event-types';
import { SsrfGuard } from './ssrf-guard';
import { pushSecretAad, resealPushHeaders } from './push-headers';
import { SecretBox, newSecret } from './webhook-secrets';

/**
 * Whose webhooks an operation may touch: one principal's own, of one agent
 * (REST, with the principal's API key). None given: any (the operator, admin CLI).
 */
export interface WebhookScope {
  agentId: string;
  /** The principal, as calls name it (`apikey:<key id>`). */
  owner: string;
}

export interface WebhookView {
  id: string;
  agent_id: string;
  /** The principal that made it; null: the operator's (hears every call of the agent). */
  owner: string | null;
  url: string;
  events: string[];
  created_at: string;
  disabled_at: string | null;
  disabled_reason: string | null;
  /** During a rotation: until when the previous secret still signs too. */
  previous_secret_expires_at: string | null;
  /** Its endpoint's health: failing since (null: healthy), and the last failure. */
  failing_since: string | null;
  last_error: string | null;
}

/** What `webhook reseal-secrets` did. */
export interface ResealReport {
  /** Webhooks whose secrets were sealed again with WEBHOOK_SECRET_KEY. */
  resealed: number;
  /** Webhooks already sealed with it: left alone. */
  current: number;
  /** Webhooks whose secret no configured key opens: left as they are (they need `rotate-secret`). */
  unreadable: string[];
}

const iso = (value: Date | null) => (value ? value.toISOString() : null);

/**
 * Webhook registrations (admin CLI and REST); their delivery log is
 * webhook-delivery-log.store.ts. Every change to a registration notifies `webhook:<agent>` in its
 * transaction, so each replica's subscription index follows at once.
 * A `scope`, when given, limits an operation to one principal's own webhooks
 * of one agent (REST): another's is unknown (404). The admin CLI passes none.
 */
@Injectable()
export class WebhooksStore {
  private readonly guard: SsrfGuard;
  private box?: SecretBox;

  constructor(
    @InjectKysely() private readonly db: GatewayDb,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {
    this.guard = new SsrfGuard(env.WEBHOOK_ALLOWED_HOSTS);
  }

  private get secrets(): SecretBox {
    return (this.box ??= SecretBox.fromEnv(this.env));
  }

  /**
   * A new webhook; its secret is returned here once, and stored encrypted.
   * `owner` (REST: the principal's) makes it hear only that principal's calls,
   * and counts against WEBHOOK_MAX_PER_OWNER (checked under a lock per owner,
   * so concurrent adds cannot both take the last place); none: the operator's.
   */
  async add(
    agentId: string,
    rawUrl: string,
    events: string[],
    owner: string | null = null,
  ): Promise<WebhookView & { secret: string }> {
    const url = await this.checkUrl(rawUrl);
    const types = checkEvents(events);
    const id = `wh_${randomBytes(12).toString('base64url')}`;
    const secret = newSecret();
    const max = this.env.WEBHOOK_MAX_PER_OWNER;
    const row = await this.db.transaction().execute(async (tx) => {
      if (owner !== null) {
        await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`webhook-owner:${agentId}:${owner}`}, 0))`.execute(
          tx,
        );
        const { held } = await tx
          .selectFrom('webhooks')
          .select((eb) => eb.fn.countAll<number>().as('held'))
          .where('agent_id', '=', agentId)
          .where('owner', '=', owner)
          .where('a2a_task_id', 'is', null)
          .executeTakeFirstOrThrow();
        if (Number(held) >= max) {
          throw new InvalidRequestError(
            `this key already holds ${max} webhooks of agent ${agentId} (WEBHOOK_MAX_PER_OWNER): remove one first`,
          );
        }
      }
      const inserted = await tx
        .insertInto('webhooks')
        .columns(['id', 'agent_id', 'url', 'events', 'secret', 'owner'])
        .expression((eb) =>
          eb
            .selectFrom('agents')
            .select([
              eb.val(id).as('id'),
              'agents.id as agent_id',
              eb.val(url).as('url'),
              sql<string[]>`${types}::text[]`.as('events'),
              eb.val(this.secrets.seal(id, secret)).as('secret'),
              eb.val(owner).as('owner'),
            ])
            .where('agents.id', '=', agentId),
        )
        .returningAll()
        .executeTakeFirst();
      if (inserted) await notifyChange('webhook', agentId).execute(tx);
      return inserted;
    });
    if (!row) throw new NotFoundError(`no agent ${agentId}`);
    return { ...view(row), secret };
  }

  /** The webhooks in scope (all of them for the operator, or of one agent with `agentId`). */
  async list(scope?: WebhookScope, agentId?: string): Promise<WebhookView[]> {
    // A2A push configs are the a2a surface's (listed there, per task), not webhooks to manage here.
    let query = this.db.selectFrom('webhooks').selectAll().where('a2a_task_id', 'is', null).orderBy('created_at');
    if (scope) query = query.where('agent_id', '=', scope.agentId).where('owner', '=', scope.owner);
    else if (agentId) query = query.where('agent_id', '=', agentId);
    return (await query.execute()).map(view);
  }

  async remove(id: string, scope?: WebhookScope): Promise<WebhookView> {
    const row = await this.db.transaction().execute(async (tx) => {
      let query = tx.deleteFrom('webhooks').where('id', '=', id);
      if (scope) query = query.where('agent_id', '=', scope.agentId).where('owner', '=', scope.owner);
      const removed = await query.returningAll().executeTakeFirst();
      if (removed) await notifyChange('webhook', removed.agent_id).execute(tx);
      return removed;
    });
    if (!row) throw new NotFoundError(`no webhook ${id}`);
    return view(row);
  }

  /**
   * Enable again a webhook that a 410 Gone disabled: events are sent to it from
   * now on, with its id and secret unchanged. The deliveries failed by the
   * disabling stay failed (`redeliver` sends one again). Enabling an active
   * webhook changes nothing.
   */
  async enable(id: string, scope?: WebhookScope): Promise<WebhookView> {
    const row = await this.db.transaction().execute(async (tx) => {
      let query = tx
        .updateTable('webhooks')
        .set({
          disabled_at: null,
          disabled_reason: null,
          failing_since: null,
          failures: 0,
          retry_at: null,
          last_error: null,
        })
        .where('id', '=', id);
      if (scope) query = query.where('agent_id', '=', scope.agentId).where('owner', '=', scope.owner);
      const updated = await query.returningAll().executeTakeFirst();
      if (updated) await notifyChange('webhook', updated.agent_id).execute(tx);
      return updated;
    });
    if (!row) throw new NotFoundError(`no webhook ${id}`);
    return view(row);
  }

  /**
   * A new secret, shown once. The previous one keeps signing beside it (both
   * signatures are sent) for WEBHOOK_ROTATION_WINDOW_SECONDS; a rotation during
   * a window drops the oldest.
   */
  async rotateSecret(id: string, scope?: WebhookScope): Promise<WebhookView & { secret: string }> {
    const secret = newSecret();
    const row = await this.db.transaction().execute(async (tx) => {
      let query = tx
        .updateTable('webhooks')
        .set((eb) => ({
          previous_secret: eb.ref('secret'),
          previous_secret_expires_at: sql<Date>`now() + make_interval(secs => ${this.env.WEBHOOK_ROTATION_WINDOW_SECONDS})`,
          secret: this.secrets.seal(id, secret),
        }))
        .where('id', '=', id);
      if (scope) query = query.where('agent_id', '=', scope.agentId).where('owner', '=', scope.owner);
      const rotated = await query.returningAll().executeTakeFirst();
      // The replicas' indexes hold the secrets their direct sends sign with (webhook-outbox.service.ts).
      if (rotated) await notifyChange('webhook', rotated.agent_id).execute(tx);
      return rotated;
    });
    if (!row) throw new NotFoundError(`no webhook ${id}`);
    return { ...view(row), secret };
  }

  /**
   * After a change of WEBHOOK_SECRET_KEY (the old key in WEBHOOK_SECRET_PREVIOUS_KEYS):
   * every secret opened with the key that sealed it and sealed again with the
   * current one, in one transaction that locks the rows (a concurrent
   * rotate-secret waits). A previous secret whose window is over is dropped, not
   * resealed. Once `unreadable` is empty, no stored secret needs an old key.
   */
  async resealSecrets(): Promise<ResealReport> {
    const box = this.secrets;
    return this.db.transaction().execute(async (tx) => {
      const rows = await tx
        .selectFrom('webhooks')
        .select([
          'id',
          'agent_id',
          'secret',
          'previous_secret',
          'a2a_headers',
          sql<boolean>`previous_secret_expires_at > now()`.as('in_window'),
        ])
        .orderBy('id')
        .forUpdate()
        .execute();
      const report: ResealReport = { resealed: 0, current: 0, unreadable: [] };
      for (const row of rows) {
        const previous = row.in_window ? row.previous_secret : null;
        const stale = [row.secret, previous, row.a2a_headers].some((sealed) => sealed && !box.isCurrent(sealed));
        if (!stale && previous === row.previous_secret) {
          report.current++;
          continue;
        }
        let secret: Buffer;
        let previousSecret: Buffer | null;
        let headers: Buffer | null;
        try {
          const reseal = (sealed: Buffer) =>
            box.isCurrent(sealed) ? sealed : box.seal(row.id, box.open(row.id, sealed));
          secret = reseal(row.secret);
          previousSecret = previous && reseal(previous);
          // An A2A push config's credentials are sealed alike (push-headers.ts).
          headers = row.a2a_headers && resealPushHeaders(box, row.id, row.a2a_headers);
        } catch {
          report.unreadable.push(row.id);
          continue;
        }
        await tx
          .updateTable('webhooks')
          .set({
            secret,
            previous_secret: previousSecret,
            a2a_headers: headers,
            ...(previousSecret ? {} : { previous_secret_expires_at: null }),
          })
          .where('id', '=', row.id)
          .execute();
        await notifyChange('webhook', row.agent_id).execute(tx);
        report.resealed++;
      }
      await this.resealPushSecrets(tx, report);
      return report;
    });
  }

  /** The callers' A2A push signing secrets (`../a2a/push/`), in the same transaction, counted alike. */
  private async resealPushSecrets(tx: GatewayDb, report: ResealReport): Promise<void> {
    const box = this.secrets;
    const rows = await tx
      .selectFrom('a2a_push_secrets')
      .selectAll()
      .orderBy('agent_id')
      .orderBy('owner')
      .forUpdate()
      .execute();
    for (const row of rows) {
      if ([row.secret, row.previous_secret].every((sealed) => !sealed || box.isCurrent(sealed))) {
        report.current++;
        continue;
      }
      const aad = pushSecretAad(row.agent_id, row.owner);
      const reseal = (sealed: Buffer) => (box.isCurrent(sealed) ? sealed : box.seal(aad, box.open(aad, sealed)));
      let secret: Buffer;
      let previous: Buffer | null;
      try {
        secret = reseal(row.secret);
        previous = row.previous_secret && reseal(row.previous_secret);
      } catch {
        report.unreadable.push(`a2a-push-secret:${row.agent_id}:${row.owner}`);
        continue;
      }
      await tx
        .updateTable('a2a_push_secrets')
        .set({ secret, previous_secret: previous })
        .where('agent_id', '=', row.agent_id)
        .where('owner', '=', row.owner)
        .execute();
      report.resealed++;
    }
  }

  private async checkUrl(raw: string): Promise<string> {
    const admitted = await this.guard.admit(raw);
    if (!admitted.ok) throw new InvalidRequestError(`url: ${admitted.reason}`);
    return admitted.url;
  }
}

function checkEvents(events: string[]): string[] {
  const types = [...new Set(events.map((e) => e.trim()).filter(Boolean))];
  if (types.length === 0) throw new InvalidRequestError('events: name at least one event type');
  const unknown = types.filter((type) => !isWebhookEventType(type));
  if (unknown.length) {
    throw new InvalidRequestError(
      `events: unknown ${unknown.join(', ')} (known: ${Object.keys(WEBHOOK_EVENT_TYPES).join(', ')})`,
    );
  }
  return types;
}

/** A webhook is in scope when no scope is given (the operator), or it is that principal's of that agent. */
export function inScope(hook: { agent_id: string; owner: string | null }, scope?: WebhookScope): boolean {
  return !scope || (hook.agent_id === scope.agentId && hook.owner === scope.owner);
}

function view(row: {
  id: string;
  agent_id: string;
  owner: string | null;
  url: string;
  events: string[];
  created_at: Date;
  disabled_at: Date | null;
  disabled_reason: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  last_error: string | null;
}): WebhookView {
  const rotating = row.previous_secret_expires_at && row.previous_secret_expires_at > new Date();
  return {
    id: row.id,
    agent_id: row.agent_id,
    owner: row.owner,
    url: row.url,
    events: row.events,
    created_at: row.created_at.toISOString(),
    disabled_at: iso(row.disabled_at),
    disabled_reason: row.disabled_reason,
    previous_secret_expires_at: rotating ? iso(row.previous_secret_expires_at) : null,
    failing_since: iso(row.failing_since),
    last_error: row.last_error,
  };
}
