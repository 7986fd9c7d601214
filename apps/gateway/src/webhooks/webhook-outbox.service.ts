import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { GroupCommit, InjectKysely, holdingUntil, type HoldDeadline } from '@mcpgw/persistence';
import { CacheInvalidationService } from '../cache/cache-invalidation.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import type { GatewayDb } from '../database/schema';
import type { A2aPushEventType, WebhookEvent, WebhookEventType } from './event-types';
import { WebhookEventsStore, type DirectLease, type OutcomeRow, type Subscription } from './webhook-events.store';

/** A webhook in the index: its row, and its event types as a set. */
export interface Hearer extends Subscription {
  types: Set<string>;
}

/** An outcome this replica wrote leased to itself, with the webhooks that hear it (from the index). */
export interface DirectEvent {
  id: string;
  agentId: string;
  payload: string;
  hearers: Hearer[];
  /** When its lease ends (epoch ms, taken before the write: never later than the row's). */
  heldUntil: number;
}

/** Who sends outcomes directly (webhook-direct-sender.ts), as the outbox sees it. */
export interface DirectSink {
  /** It has room for one more outcome (else the outcome is any dispatcher's). */
  readonly open: boolean;
  readonly lease: DirectLease;
  take(event: DirectEvent): void;
}

/**
 * The call path's side of webhooks: one row per outcome, whichever webhooks
 * hear it, and nothing more. `wants` says, from memory, whether any webhook
 * of the agent hears this event of this caller (the operator's, or the
 * caller's own): when not, the call does no SQL at all. `recordAlone` is
 * group-committed: the outcomes of the calls that end while one write is on
 * its way go together in the next (one statement, one commit), and each call
 * answers once its own row is committed. When every webhook that hears it is
 * healthy, the row is written leased to this replica and handed to its direct
 * sender once committed: no fan-out or claim round trip. `record` writes in the
 * transaction of the state change it reports (an idempotency record, a task's
 * end), for any dispatcher (webhook-dispatcher.service.ts).
 *
 * The index is read in full at start, and one agent's again when
 * `webhook:<agent>` is notified (admin CLI or REST, in the writing
 * transaction; an endpoint starting to fail or recovering); in full after a
 * lost notice connection, and every AUTH_CACHE_TTL_MS.
 */
@Injectable()
export class WebhookOutbox implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookOutbox.name);
  private listeners = new Map<string, Hearer[]>();
  /** Agents with A2A push configs (not in the index: one per task, they are many; the dispatcher sends them). */
  private pushAgents = new Set<string>();
  private reloadTimer?: NodeJS.Timeout;
  private direct?: DirectSink;
  /** The group commit of `recordAlone`: one statement for the outcomes of the calls that ended meanwhile. */
  private readonly group = new GroupCommit<OutcomeRow, string>((rows, deadline) =>
    this.store.insertEvents(holdingUntil(this.db, deadline), rows, this.direct?.lease),
  );

  constructor(
    @InjectKysely() private readonly db: GatewayDb,
    private readonly store: WebhookEventsStore,
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
    return this.listeners.size > 0 || this.pushAgents.size > 0;
  }

  /** From memory: does a webhook of the agent hear this event of this caller (the operator's, or the caller's)? */
  wants(agentId: string, type: WebhookEventType, callerId: string | null): boolean {
    return this.hearers(agentId, type, callerId).length > 0;
  }

  /** The outcome's row, written with `executor`: the transaction of the state change it reports. */
  async record(executor: GatewayDb, agentId: string, callerId: string | null, event: WebhookEvent): Promise<void> {
    await this.store.insertEvents(executor, [row(agentId, callerId, event)]);
  }

  /**
   * An A2A push event (`../a2a/push/`): its payload as it is sent, for the push configs of one task
   * (or only `webhookId` of them), written with `executor` (the transaction of the task's change),
   * for any dispatcher. One row per body (one statement): each config hears the type it subscribes
   * to (its A2A version's body); a body no config hears is dropped when the outbox fans it out.
   */
  async recordPush(
    executor: GatewayDb,
    push: {
      agentId: string;
      callerId: string;
      a2aTaskId: string;
      webhookId?: string;
      bodies: { type: A2aPushEventType; payload: string }[];
    },
  ): Promise<void> {
    const { bodies, ...event } = push;
    await this.store.insertEvents(
      executor,
      bodies.map((body) => ({ ...event, ...body })),
    );
  }

  /**
   * `record` on its own (no other state change to join), group-committed with other calls' outcomes;
   * sent by this replica once committed when every webhook that hears it is healthy and the sender has room.
   * Nothing, and no SQL, when no webhook hears it. `deadline`: the call's, which the write waits
   * for at most while the database is away.
   */
  async recordAlone(
    agentId: string,
    callerId: string | null,
    event: WebhookEvent,
    deadline?: HoldDeadline,
  ): Promise<void> {
    const hearers = this.hearers(agentId, event.type, callerId);
    if (hearers.length === 0) return;
    const direct = this.direct;
    const sendsIt = direct !== undefined && direct.open && hearers.every((hook) => hook.healthy);
    const heldUntil = Date.now() + (direct?.lease.ms ?? 0);
    const quiet = !sendsIt && hearers.every((hook) => !hook.healthy);
    const outcome = { ...row(agentId, callerId, event), direct: sendsIt, quiet };
    const id = await this.group.submit(outcome, deadline);
    if (sendsIt) direct.take({ id, agentId, payload: outcome.payload, hearers, heldUntil });
  }

  /** The direct sender of this replica (it attaches itself). */
  attach(direct: DirectSink): void {
    this.direct = direct;
  }

  /** An attempt of this replica found the endpoint failing: its outcomes go to the dispatcher until it recovers. */
  markFailing(agentId: string, webhookId: string): void {
    const hook = this.listeners.get(agentId)?.find((h) => h.id === webhookId);
    if (hook) hook.healthy = false;
  }

  private hearers(agentId: string, type: string, callerId: string | null): Hearer[] {
    const hooks = this.listeners.get(agentId);
    if (!hooks) return [];
    return hooks.filter((hook) => hook.types.has(type) && (hook.owner === null || hook.owner === callerId));
  }

  private async reloadAll(): Promise<void> {
    try {
      const next = new Map<string, Hearer[]>();
      for (const hook of await this.store.subscriptions()) {
        next.set(hook.agent_id, [...(next.get(hook.agent_id) ?? []), hearer(hook)]);
      }
      this.pushAgents = new Set(await this.store.pushAgents());
      this.listeners = next;
    } catch (error) {
      this.logger.warn(`webhook subscriptions: ${(error as Error).message}`);
    }
  }

  private async reloadAgent(agentId: string): Promise<void> {
    try {
      const rows = await this.store.subscriptions(agentId);
      if (rows.length) this.listeners.set(agentId, rows.map(hearer));
      else this.listeners.delete(agentId);
      if ((await this.store.pushAgents(agentId)).length) this.pushAgents.add(agentId);
      else this.pushAgents.delete(agentId);
    } catch (error) {
      this.logger.warn(`webhook subscriptions of ${agentId}: ${(error as Error).message}`);
    }
  }
}

const hearer = (hook: Subscription): Hearer => ({ ...hook, types: new Set(hook.events) });

function row(agentId: string, callerId: string | null, event: WebhookEvent): OutcomeRow {
  return { agentId, callerId, type: event.type, payload: JSON.stringify(event) };
}
