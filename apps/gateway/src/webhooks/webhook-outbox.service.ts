import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectKysely } from '@mcpgw/persistence';
import { CacheInvalidationService } from '../cache/cache-invalidation.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import type { GatewayDb } from '../database/schema';
import type { WebhookEvent, WebhookEventType } from './event-types';
import { WebhookDeliveriesStore } from './webhook-deliveries.store';

/**
 * The writing side of the webhook outbox. `wants` says, from memory, whether
 * an agent has any webhook for an event type: when not, the call path does no
 * SQL at all. `record` writes one delivery row per subscribed webhook, with
 * the executor it is given: the transaction of the state change it reports.
 *
 * The index of subscriptions is read in full at start, and one agent's again
 * when `webhook:<agent>` is notified (admin CLI or REST, in the writing
 * transaction); in full after a lost notice connection, and every AUTH_CACHE_TTL_MS.
 */
@Injectable()
export class WebhookOutbox implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookOutbox.name);
  private subscriptions = new Map<string, Set<string>>();
  private reloadTimer?: NodeJS.Timeout;

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
    return this.subscriptions.size > 0;
  }

  /** From memory: does the agent have an enabled webhook for this event type? */
  wants(agentId: string, type: WebhookEventType): boolean {
    return this.subscriptions.get(agentId)?.has(type) === true;
  }

  /**
   * One outbox row per enabled webhook of the agent subscribed to the event
   * (read in the statement, so a stale index never sends to a removed webhook),
   * written with `executor`: the transaction of the state change it reports.
   */
  record(executor: GatewayDb, agentId: string, event: WebhookEvent): Promise<number> {
    return this.store.insertEvent(executor, agentId, event.type, JSON.stringify(event));
  }

  /** `record` on its own (no other state change to join): the insert is the state change. */
  recordAlone(agentId: string, event: WebhookEvent): Promise<number> {
    return this.record(this.db, agentId, event);
  }

  private async reloadAll(): Promise<void> {
    try {
      const rows = await this.store.subscriptions();
      const next = new Map<string, Set<string>>();
      for (const row of rows) {
        const set = next.get(row.agent_id) ?? new Set<string>();
        for (const type of row.events) set.add(type);
        next.set(row.agent_id, set);
      }
      this.subscriptions = next;
    } catch (error) {
      this.logger.warn(`webhook subscriptions: ${(error as Error).message}`);
    }
  }

  private async reloadAgent(agentId: string): Promise<void> {
    try {
      const rows = await this.store.subscriptions(agentId);
      const types = new Set(rows.flatMap((row) => row.events));
      if (types.size) this.subscriptions.set(agentId, types);
      else this.subscriptions.delete(agentId);
    } catch (error) {
      this.logger.warn(`webhook subscriptions of ${agentId}: ${(error as Error).message}`);
    }
  }
}
