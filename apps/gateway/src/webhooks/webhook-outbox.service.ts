import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectKysely } from '@mcpgw/persistence';
import { CacheInvalidationService } from '../cache/cache-invalidation.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import type { GatewayDb } from '../database/schema';
import type { WebhookEvent, WebhookEventType } from './event-types';
import { GroupWriter } from './group-writer';
import { WebhookDeliveriesStore, type OutcomeRow } from './webhook-deliveries.store';

/** Who hears an agent's events: one entry per webhook (its owner, null for the operator's, and its types). */
type Listeners = { owner: string | null; types: Set<string> }[];

/**
 * The call path's side of webhooks: one row per outcome, whichever webhooks
 * hear it, and nothing more. `wants` says, from memory, whether any webhook
 * of the agent hears this event of this caller (the operator's, or the
 * caller's own): when not, the call does no SQL at all. `recordAlone` is
 * group-committed: the outcomes of the calls that end while one write is on
 * its way go together in the next (one statement, one commit), and each call
 * answers once its own row is committed. `record` writes in the transaction
 * of the state change it reports (an idempotency record, a task's end). The
 * dispatcher fans the rows out to deliveries, off the call path
 * (webhook-dispatcher.service.ts).
 *
 * The index is read in full at start, and one agent's again when
 * `webhook:<agent>` is notified (admin CLI or REST, in the writing
 * transaction); in full after a lost notice connection, and every AUTH_CACHE_TTL_MS.
 */
@Injectable()
export class WebhookOutbox implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookOutbox.name);
  private listeners = new Map<string, Listeners>();
  private reloadTimer?: NodeJS.Timeout;
  /** The group commit of `recordAlone`: one statement for the outcomes of the calls that ended meanwhile. */
  private readonly group = new GroupWriter<OutcomeRow, void>(async (rows) => {
    await this.store.insertEvents(this.db, rows);
    return rows.map(() => undefined);
  });

  constructor(
    @InjectKysely() private readonly db: GatewayDb,
    private readonly store: WebhookDeliveriesStore,
    private readonly invalidation: CacheInvalidationService,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  async onModuleInit(): Promise<void> {
    this.invalidation.on('webhook', (agentId) => void (agentId ? this.reloadAgent(agentId) : this.reloadAll()));
    await this.reloadAll();
    this.reloadTimer = setInterval(() => void this.reloadAll(), this.env.AUTH_CACHE_TTL_MS).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.reloadTimer);
  }

  /** From memory: is there any enabled webhook at all? (No: the dispatcher need not poll.) */
  get any(): boolean {
    return this.listeners.size > 0;
  }

  /** From memory: does a webhook of the agent hear this event of this caller (the operator's, or the caller's)? */
  wants(agentId: string, type: WebhookEventType, callerId: string | null): boolean {
    return (
      this.listeners
        .get(agentId)
        ?.some((hook) => hook.types.has(type) && (hook.owner === null || hook.owner === callerId)) === true
    );
  }

  /** The outcome's row, written with `executor`: the transaction of the state change it reports. */
  record(executor: GatewayDb, agentId: string, callerId: string | null, event: WebhookEvent): Promise<void> {
    return this.store.insertEvents(executor, [row(agentId, callerId, event)]);
  }

  /** `record` on its own (no other state change to join), group-committed with other calls' outcomes. */
  recordAlone(agentId: string, callerId: string | null, event: WebhookEvent): Promise<void> {
    return this.group.add(row(agentId, callerId, event));
  }

  private async reloadAll(): Promise<void> {
    try {
      const rows = await this.store.subscriptions();
      const next = new Map<string, Listeners>();
      for (const hook of rows) {
        const list = next.get(hook.agent_id) ?? [];
        list.push({ owner: hook.owner, types: new Set(hook.events) });
        next.set(hook.agent_id, list);
      }
      this.listeners = next;
    } catch (error) {
      this.logger.warn(`webhook subscriptions: ${(error as Error).message}`);
    }
  }

  private async reloadAgent(agentId: string): Promise<void> {
    try {
      const rows = await this.store.subscriptions(agentId);
      if (rows.length)
        this.listeners.set(
          agentId,
          rows.map((hook) => ({ owner: hook.owner, types: new Set(hook.events) })),
        );
      else this.listeners.delete(agentId);
    } catch (error) {
      this.logger.warn(`webhook subscriptions of ${agentId}: ${(error as Error).message}`);
    }
  }
}

function row(agentId: string, callerId: string | null, event: WebhookEvent): OutcomeRow {
  return { agentId, callerId, type: event.type, payload: JSON.stringify(event) };
}
