import { Inject, Injectable } from '@nestjs/common';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import { randomBytes } from 'node:crypto';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';
import { notifyChange } from '../../database/notify-change';
import type { GatewayDb } from '../../database/schema';
import { TaskStore, type TaskRow } from '../../tasks/tasks.store';
import { A2A_PUSH_EVENT_TYPE, A2A_PUSH_V03_EVENT_TYPE } from '../../webhooks/event-types';
import {
  pushSecretAad as secretAad,
  readPushHeaders,
  sealPushHeaders,
  type PushHeaders,
} from '../../webhooks/push-headers';
import { SecretBox, newSecret } from '../../webhooks/webhook-secrets';

/** A push config as stored: what the client may read back of it (never its credentials or token). */
export interface StoredConfig {
  /** The `webhooks` row: the endpoint the outbox delivers to. */
  webhookId: string;
  configId: string;
  url: string;
  scheme: string | null;
  hasToken: boolean;
}

/** A config to store (checked: push-config-shapes.ts; the URL admitted by the SSRF guard). */
export interface NewConfig {
  configId: string;
  url: string;
  headers: PushHeaders;
  /** Made over A2A 0.3: it hears the 0.3 body (`A2A_PUSH_V03_EVENT_TYPE`), not the 1.0 one. */
  legacy?: boolean;
}

interface SigningSecrets {
  secret: string;
  previous: string | null;
  previousExpiresAt: Date | null;
}

/** How many configs one task holds at most. */
export const MAX_CONFIGS_PER_TASK = 10;

/**
 * A2A push configs in PostgreSQL: each a `webhooks` row bound to its task
 * (`a2a_task_id`, deleted with it) and its caller (`owner`), so the outbox
 * delivers to it as to any webhook. Its signing secret is the caller's (one
 * per agent, `a2a_push_secrets`, made on first use), sealed into the row under
 * the row's id; its `authentication` and `token` sealed beside it. Every
 * change notifies `webhook:<agent>` (the replicas' dispatchers learn there are
 * push configs to poll for).
 */
@Injectable()
export class PushConfigsStore {
  private box?: SecretBox;

  constructor(
    @InjectKysely() private readonly db: GatewayDb,
    private readonly tasks: TaskStore,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  private get secrets(): SecretBox {
    return (this.box ??= SecretBox.fromEnv(this.env));
  }

  /**
   * Store a config (one with the same id on this task is replaced), mark the
   * task `push`, and hand `then` the row as it is, in the same transaction
   * (the state the config starts with). `full` past MAX_CONFIGS_PER_TASK.
   */
  async put(
    row: TaskRow,
    config: NewConfig,
    then: (tx: GatewayDb, task: TaskRow, webhookId: string) => Promise<void>,
  ): Promise<StoredConfig | 'gone' | 'full'> {
    const id = `a2p_${randomBytes(12).toString('base64url')}`;
    return this.db.transaction().execute(async (tx) => {
      // The task's row lock orders this against its changes: one that commits first, this reads; any later sees `push`.
      const task = await this.tasks.pushOn(tx, row.id);
      if (!task) return 'gone';
      const { held } = await tx
        .selectFrom('webhooks')
        .select((eb) => eb.fn.countAll<number>().as('held'))
        .where('a2a_task_id', '=', row.id)
        .where('a2a_config_id', '!=', config.configId)
        .executeTakeFirstOrThrow();
      if (Number(held) >= MAX_CONFIGS_PER_TASK) return 'full';
      // The same id again replaces the config (a new endpoint: the old one's pending deliveries go with it).
      await tx
        .deleteFrom('webhooks')
        .where('a2a_task_id', '=', row.id)
        .where('a2a_config_id', '=', config.configId)
        .execute();
      const signing = await this.signingSecretIn(tx, row.agent_id, row.principal);
      await tx
        .insertInto('webhooks')
        .values({
          id,
          agent_id: row.agent_id,
          owner: row.principal,
          url: config.url,
          events: [config.legacy ? A2A_PUSH_V03_EVENT_TYPE : A2A_PUSH_EVENT_TYPE],
          secret: this.secrets.seal(id, signing.secret),
          previous_secret: signing.previous === null ? null : this.secrets.seal(id, signing.previous),
          previous_secret_expires_at: signing.previousExpiresAt,
          a2a_task_id: row.id,
          a2a_config_id: config.configId,
          a2a_headers: sealPushHeaders(this.secrets, id, config.headers),
        })
        .execute();
      await notifyChange('webhook', row.agent_id).execute(tx);
      await then(tx, task, id);
      return {
        webhookId: id,
        configId: config.configId,
        url: config.url,
        scheme: schemeOf(config.headers),
        hasToken: !!config.headers.token,
      };
    });
  }

  /** The task's configs (one, with `configId`), oldest first. */
  async list(taskId: string, configId?: string): Promise<StoredConfig[]> {
    let query = this.db
      .selectFrom('webhooks')
      .select(['id', 'a2a_config_id', 'url', 'a2a_headers'])
      .where('a2a_task_id', '=', taskId)
      .orderBy('created_at')
      .orderBy('id');
    if (configId !== undefined) query = query.where('a2a_config_id', '=', configId);
    const rows = await query.execute();
    return rows.map((r) => {
      const headers = this.headersOf(r.id, r.a2a_headers);
      return {
        webhookId: r.id,
        configId: r.a2a_config_id ?? '',
        url: r.url,
        scheme: schemeOf(headers),
        hasToken: !!headers.token,
      };
    });
  }

  /** Remove a config (its pending deliveries go with it); whether there was one. */
  async remove(agentId: string, taskId: string, configId: string): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const removed = await tx
        .deleteFrom('webhooks')
        .where('a2a_task_id', '=', taskId)
        .where('a2a_config_id', '=', configId)
        .executeTakeFirst();
      if (Number(removed.numDeletedRows) === 0) return false;
      await notifyChange('webhook', agentId).execute(tx);
      return true;
    });
  }

  /** The caller's signing secret for this agent's push notifications, made on first use. */
  async signingSecret(agentId: string, owner: string): Promise<string> {
    return (await this.db.transaction().execute((tx) => this.signingSecretIn(tx, agentId, owner))).secret;
  }

  /**
   * A new signing secret for the caller (as a webhook's rotation): its push configs, those made
   * before and those made during the window, sign with it at once, and with the previous one
   * beside it for WEBHOOK_ROTATION_WINDOW_SECONDS (a rotation during a window drops the oldest).
   */
  async rotateSigningSecret(agentId: string, owner: string): Promise<string> {
    const secret = newSecret();
    await this.db.transaction().execute(async (tx) => {
      await this.signingSecretIn(tx, agentId, owner);
      await tx
        .updateTable('a2a_push_secrets')
        .set((eb) => ({
          previous_secret: eb.ref('secret'),
          previous_secret_expires_at: sql<Date>`now() + make_interval(secs => ${this.env.WEBHOOK_ROTATION_WINDOW_SECONDS})`,
          secret: this.secrets.seal(secretAad(agentId, owner), secret),
        }))
        .where('agent_id', '=', agentId)
        .where('owner', '=', owner)
        .execute();
      const configs = await tx
        .selectFrom('webhooks')
        .select('id')
        .where('agent_id', '=', agentId)
        .where('owner', '=', owner)
        .where('a2a_task_id', 'is not', null)
        .forUpdate()
        .execute();
      for (const { id } of configs) {
        await tx
          .updateTable('webhooks')
          .set((eb) => ({
            previous_secret: eb.ref('secret'),
            previous_secret_expires_at: sql<Date>`now() + make_interval(secs => ${this.env.WEBHOOK_ROTATION_WINDOW_SECONDS})`,
            secret: this.secrets.seal(id, secret),
          }))
          .where('id', '=', id)
          .execute();
      }
    });
    return secret;
  }

  /** The caller's signing secret (made on first use), and the previous one while its window lasts. */
  private async signingSecretIn(tx: GatewayDb, agentId: string, owner: string): Promise<SigningSecrets> {
    const made = newSecret();
    // Two first uses at once: one insert wins, both read its secret.
    await tx
      .insertInto('a2a_push_secrets')
      .values({ agent_id: agentId, owner, secret: this.secrets.seal(secretAad(agentId, owner), made) })
      .onConflict((oc) => oc.columns(['agent_id', 'owner']).doNothing())
      .execute();
    const row = await tx
      .selectFrom('a2a_push_secrets')
      .select(['secret', 'previous_secret', 'previous_secret_expires_at'])
      .where('agent_id', '=', agentId)
      .where('owner', '=', owner)
      .executeTakeFirstOrThrow();
    const aad = secretAad(agentId, owner);
    const inWindow =
      row.previous_secret && row.previous_secret_expires_at && row.previous_secret_expires_at > new Date();
    return {
      secret: this.secrets.open(aad, row.secret),
      previous: inWindow ? this.secrets.open(aad, row.previous_secret!) : null,
      previousExpiresAt: inWindow ? row.previous_secret_expires_at : null,
    };
  }

  /** The scheme of a stored config's authentication (the credentials are never read back out). */
  private headersOf(webhookId: string, sealed: Buffer | null): PushHeaders {
    if (!sealed) return {};
    try {
      return readPushHeaders(this.secrets, webhookId, sealed);
    } catch {
      return {};
    }
  }
}

function schemeOf(headers: PushHeaders): string | null {
  return headers.authorization ? headers.authorization.split(' ', 1)[0] : null;
}
