import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { Draining } from '@mcpgw/runtime';
import { GroupCommit } from '@mcpgw/persistence';
import { randomUUID } from 'node:crypto';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { WebhookAttempts, type AttemptOutcome } from './webhook-attempts';
import type { ClaimedDelivery } from './webhook-deliveries.store';
import { WebhookEventsStore, deliveryIdOf, type DirectAttempt, type DirectLease } from './webhook-events.store';
import { WebhookOutbox, type DirectEvent, type DirectSink, type Hearer } from './webhook-outbox.service';

/**
 * An outcome is started only while its lease outlasts the attempt's timeout by this much (or by half of
 * what the lease has beyond the timeout, if less): time to settle it. Otherwise any dispatcher sends it.
 */
const LEASE_MARGIN_MS = 1_000;

/**
 * A settle waits this long for others to join it: nobody waits on it (the
 * receiver has its answer, the row its lease), and one statement for many
 * outcomes costs PostgreSQL far less per outcome than one for a few (0.035
 * against 0.08-0.13 ms of the backend's CPU at 35 and at 7 a statement,
 * docs/benchmarks.md). Well inside LEASE_MARGIN_MS.
 */
const SETTLE_GATHER_MS = 50;

/** One attempt to one webhook: what was sent, what came of it, and its record for the settle. */
interface Made {
  delivery: ClaimedDelivery;
  outcome: AttemptOutcome;
  attempt: DirectAttempt;
}

/**
 * The replica that wrote an outcome sends it itself, right after the commit:
 * the row was written leased to this replica (`lease`), so no dispatcher
 * takes it meanwhile, and the fan-out, the claim and the record of a
 * delivery, three statements and three row versions each through the
 * dispatcher, become one statement for many outcomes (`settle`: the row goes,
 * each delivery is written once, finished, with its attempt). Only outcomes
 * whose webhooks are all healthy come here (the outbox's index says so); an
 * endpoint found failing goes back to the dispatcher's probes and backoff.
 *
 * Bounded like the dispatcher: WEBHOOK_DISPATCH_BATCH deliveries in flight and
 * queued, WEBHOOK_ENDPOINT_CONCURRENCY per endpoint; past that the outbox
 * writes rows for any dispatcher. A replica that dies holding rows loses
 * nothing: their lease (WEBHOOK_LEASE_MS) ends and any dispatcher fans them
 * out, with the same delivery ids (`deliveryIdOf`), so a receiver that got
 * the direct attempt de-duplicates the second. On SIGTERM it takes no more,
 * gives back what it has not started, and settles what it has.
 */
@Injectable()
export class WebhookDirectSender implements DirectSink, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhookDirectSender.name);
  readonly lease: DirectLease;
  private readonly queue: DirectEvent[] = [];
  /** Deliveries in flight, in all and per webhook. */
  private inFlight = 0;
  private readonly perEndpoint = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private readonly releasing = new Set<Promise<void>>();
  private stopped = false;
  /** See LEASE_MARGIN_MS. */
  private readonly margin: number;
  /** Each item is one outcome's attempts; one statement settles all that ended meanwhile. */
  private readonly settled = new GroupCommit<DirectAttempt[], boolean>(
    async (events) => {
      const done = await this.events.settle(this.lease.token, events.flat());
      return events.map((attempts) => done.has(attempts[0].eventId));
    },
    { gatherMs: SETTLE_GATHER_MS },
  );
  private readonly released = new GroupCommit<string, void>(async (ids) => {
    await this.events.release(this.lease.token, ids);
    return ids.map(() => undefined);
  });

  constructor(
    private readonly events: WebhookEventsStore,
    private readonly attempts: WebhookAttempts,
    private readonly outbox: WebhookOutbox,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
    draining: Draining,
  ) {
    this.lease = { token: randomUUID(), ms: env.WEBHOOK_LEASE_MS };
    this.margin = Math.min(LEASE_MARGIN_MS, (env.WEBHOOK_LEASE_MS - env.WEBHOOK_TIMEOUT_MS) / 2);
    outbox.attach(this);
    draining.register({
      name: 'webhook direct sends',
      stopIntake: () => this.stop(),
      settled: () => this.drained(),
      handBack: async () => undefined,
      pending: () => (this.inFlight ? [`${this.inFlight} direct webhook deliveries`] : []),
    });
  }

  get open(): boolean {
    return !this.stopped && this.queue.length + this.inFlight < this.env.WEBHOOK_DISPATCH_BATCH;
  }

  take(event: DirectEvent): void {
    if (this.stopped) return this.giveBack(event);
    this.queue.push(event);
    this.pump();
  }

  /** Start what has room, oldest first; an outcome whose lease is about to end is given back. */
  private pump(): void {
    for (let i = 0; i < this.queue.length && this.inFlight < this.env.WEBHOOK_DISPATCH_BATCH;) {
      const event = this.queue[i];
      if (event.heldUntil - Date.now() < this.env.WEBHOOK_TIMEOUT_MS + this.margin) {
        this.queue.splice(i, 1);
        this.giveBack(event);
      } else if (event.hearers.every((hook) => this.busy(hook.id) < this.env.WEBHOOK_ENDPOINT_CONCURRENCY)) {
        this.queue.splice(i, 1);
        const sending: Promise<void> = this.send(event).finally(() => {
          this.running.delete(sending);
          this.pump();
        });
        this.running.add(sending);
      } else i++;
    }
  }

  /**
   * One attempt per webhook that hears it, then the settle; a 410's disabling after it. Never throws.
   * The endpoints' places are free once the attempts end: the settle waits for its batch (SETTLE_GATHER_MS).
   */
  private async send(event: DirectEvent): Promise<void> {
    for (const hook of event.hearers) this.count(hook.id, +1);
    let made: Made[];
    try {
      made = await Promise.all(event.hearers.map((hook) => this.attempt(event, hook)));
    } catch (error) {
      // Its lease ends and any dispatcher fans it out (same delivery ids: the receiver de-duplicates).
      this.logger.warn({ msg: 'direct webhook send failed', event_id: event.id, error: (error as Error).message });
      return;
    } finally {
      for (const hook of event.hearers) this.count(hook.id, -1);
      this.pump();
    }
    try {
      const settled = await this.settled.submit(made.map((m) => m.attempt));
      if (!settled) this.logger.warn({ msg: 'webhook event outlived its lease', event_id: event.id });
      for (const { delivery, outcome } of made) if (outcome.health === 'gone') await this.attempts.gone(delivery);
    } catch (error) {
      // Its lease ends and any dispatcher fans it out (same delivery ids: the receiver de-duplicates).
      this.logger.warn({ msg: 'direct webhook settle failed', event_id: event.id, error: (error as Error).message });
    }
  }

  private async attempt(event: DirectEvent, hook: Hearer): Promise<Made> {
    const delivery: ClaimedDelivery = {
      id: deliveryIdOf(event.id, hook.id),
      webhook_id: hook.id,
      agent_id: event.agentId,
      url: hook.url,
      payload: event.payload,
      attempts: 0,
      secret: hook.secret,
      previous_secret: hook.previous_secret,
      previous_secret_expires_at: hook.previous_secret_expires_at,
      probe: false,
    };
    const startedAt = new Date();
    const outcome = await this.attempts.make(delivery);
    if (outcome.health === 'failing') {
      // Its next outcomes go to the dispatcher, which probes it as it backs off.
      this.outbox.markFailing(event.agentId, hook.id);
      await this.attempts.endpointFailed(delivery, outcome.result);
    }
    const { result } = outcome;
    return {
      delivery,
      outcome,
      attempt: {
        eventId: event.id,
        webhookId: hook.id,
        attempt: {
          startedAt,
          durationMs: result.durationMs,
          outcome: outcome.label,
          responseCode: result.status ?? null,
          error: result.error ?? null,
          replica: this.env.SERVICE_INSTANCE,
        },
        next: outcome.next,
      },
    };
  }

  private busy(webhookId: string): number {
    return this.perEndpoint.get(webhookId) ?? 0;
  }

  private count(webhookId: string, delta: number): void {
    this.inFlight += delta;
    const next = this.busy(webhookId) + delta;
    if (next > 0) this.perEndpoint.set(webhookId, next);
    else this.perEndpoint.delete(webhookId);
  }

  /** Any dispatcher's now (its lease cleared, the dispatchers woken). */
  private giveBack(event: DirectEvent): void {
    const releasing: Promise<void> = this.released
      .submit(event.id)
      .catch((error: Error) => {
        // Its lease ends all the same, and any dispatcher fans it out then.
        this.logger.warn({ msg: 'webhook event release failed', event_id: event.id, error: error.message });
      })
      .finally(() => this.releasing.delete(releasing));
    this.releasing.add(releasing);
  }

  private stop(): void {
    this.stopped = true;
    for (const event of this.queue.splice(0)) this.giveBack(event);
  }

  /** What was started has been sent and settled (each attempt within WEBHOOK_TIMEOUT_MS). */
  private async drained(): Promise<void> {
    while (this.running.size > 0 || this.releasing.size > 0) {
      await Promise.allSettled([...this.running, ...this.releasing]);
    }
  }

  /** Without a drain (an app closed otherwise): the same, before the database pool closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stop();
    await this.drained();
  }
}
