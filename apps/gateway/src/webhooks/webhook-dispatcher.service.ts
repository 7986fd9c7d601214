import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { METRICS_REGISTRY } from '@mcpgw/observability';
import { Draining } from '@mcpgw/runtime';
import { GroupCommit } from '@mcpgw/persistence';
import type { Registry } from 'prom-client';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { CacheInvalidationService } from '../cache/cache-invalidation.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { OUTBOX_CHANNEL } from '../database/database';
import { WebhookAttempts } from './webhook-attempts';
import { WebhookDeliveriesStore, type ClaimedDelivery, type FinishedAttempt } from './webhook-deliveries.store';
import { WebhookEventsStore } from './webhook-events.store';
import { backlogGauges } from './webhook-metrics';
import { WebhookOutbox } from './webhook-outbox.service';

/**
 * An idle pump (nothing in flight) waits this long after a wake-up, so that the notices of
 * many calls make one pass: a stream of notices costs a pass per 20 ms, not one per commit (the
 * outcomes of a dead endpoint send none: they are quiet, for the poll). A pump with deliveries in
 * flight refills at once.
 */
const COALESCE_MS = 20;
/** Outcomes fanned out to deliveries per statement. */
const EXPAND_BATCH = 1_000;

/**
 * Sends the outbox, off the call path. Every replica runs one: woken by the
 * notice an outcome's commit sends (many calls' notices make one pass), and
 * every WEBHOOK_POLL_INTERVAL_MS for probes that came due (and notices lost).
 * A pass fans the new outcomes out to deliveries, then claims due deliveries,
 * at most WEBHOOK_ENDPOINT_CONCURRENCY per endpoint and WEBHOOK_DISPATCH_BATCH
 * in flight in all, and records their attempts many at a time. An endpoint
 * that fails backs off as a whole: one probe per backoff step, whatever the
 * number of calls meanwhile; one that has failed for WEBHOOK_DISABLE_AFTER_SECONDS
 * is disabled, saying why.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhookDispatcher.name);
  private readonly replica: string;
  private pollTimer?: NodeJS.Timeout;
  private purgeTimer?: NodeJS.Timeout;
  private stopped = false;
  /** The claim pass under way, if any (one at a time). */
  private pumping?: Promise<void>;
  private again = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** In flight at or below this, a finished delivery wakes the pump to claim more. */
  private readonly refillAt: number;
  /** Attempts recorded many at a time: one statement for all that ended meanwhile; each learns whether its lease held. */
  private readonly results = new GroupCommit<FinishedAttempt, boolean>(async (done) => {
    const recorded = await this.deliveries.finishMany(done);
    return done.map((attempt) => recorded.has(attempt.id));
  });

  constructor(
    private readonly deliveries: WebhookDeliveriesStore,
    private readonly events: WebhookEventsStore,
    private readonly attempts: WebhookAttempts,
    private readonly outbox: WebhookOutbox,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
    @Inject(METRICS_REGISTRY) registry: Registry,
    draining: Draining,
    private readonly invalidation: CacheInvalidationService,
  ) {
    // On SIGTERM: stop claiming, let the attempts in flight end and be recorded. One cut
    // past the grace keeps its lease, and another replica sends it when the lease ends.
    draining.register({
      name: 'webhook dispatcher',
      stopIntake: () => this.stop(),
      settled: () => this.settled(),
      handBack: async () => undefined,
      pending: () => (this.inFlight.size ? [`${this.inFlight.size} webhook deliveries`] : []),
    });
    backlogGauges(registry, () => (this.outbox.any ? this.deliveries.backlog() : undefined));
    this.replica = env.SERVICE_INSTANCE;
    this.refillAt = Math.min(env.WEBHOOK_DISPATCH_BATCH, env.WEBHOOK_ENDPOINT_CONCURRENCY) / 2;
    if (env.WEBHOOK_LEASE_MS <= env.WEBHOOK_TIMEOUT_MS) {
      throw new Error('WEBHOOK_LEASE_MS must be longer than WEBHOOK_TIMEOUT_MS');
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    // On the replica's one LISTEN connection (the cache's); after it reconnects, look at once.
    await this.invalidation.listen(
      OUTBOX_CHANNEL,
      () => this.wake(),
      () => this.wake(),
    );
    // With no enabled webhook anywhere there is nothing to claim: an idle gateway sends no SQL.
    this.pollTimer = setInterval(() => this.outbox.any && this.wake(), this.env.WEBHOOK_POLL_INTERVAL_MS).unref();
    this.purgeTimer = setInterval(
      () => this.outbox.any && void this.purge(),
      this.env.WEBHOOK_PURGE_INTERVAL_MS,
    ).unref();
    this.wake();
  }

  /**
   * Deliveries still pending after WEBHOOK_RETENTION_SECONDS fail as expired, and finished
   * ones older than that go, 1,000 a statement (any replica; they do not collide).
   */
  private async purge(): Promise<void> {
    try {
      const retention = this.env.WEBHOOK_RETENTION_SECONDS;
      let expired = 0;
      for (let n = await this.deliveries.expirePending(retention); n > 0;) {
        expired += n;
        n = this.stopped ? 0 : await this.deliveries.expirePending(retention);
      }
      const batch = () => this.deliveries.purgeFinished(retention);
      let purged = 0;
      for (let n = await batch(); n > 0; n = this.stopped ? 0 : await batch()) purged += n;
      if (purged > 0 || expired > 0) this.logger.log({ msg: 'purged old webhook deliveries', purged, expired });
    } catch (error) {
      this.logger.warn(`webhook purge: ${(error as Error).message}`);
    }
  }

  /** Take no more deliveries. */
  private stop(): void {
    this.stopped = true;
    clearInterval(this.pollTimer);
    clearInterval(this.purgeTimer);
  }

  /** The attempts in flight have ended and are recorded (each within WEBHOOK_TIMEOUT_MS). */
  private async settled(): Promise<void> {
    // A claim under way when intake stopped may still start attempts: wait for it, then for them.
    // Each wait is on real work (pump and attempts never reject): a loop that polled a flag with
    // an already-settled promise would spin on microtasks and starve the very I/O it waits for.
    for (let waits = this.running(); waits.length > 0; waits = this.running()) {
      await Promise.allSettled(waits);
    }
  }

  /** Without a drain (an app closed otherwise): the same, before the database pool closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stop();
    await this.settled();
  }

  private running(): Promise<void>[] {
    return this.pumping ? [this.pumping, ...this.inFlight] : [...this.inFlight];
  }

  /** Claim and start due deliveries until the batch is full or none is due. One pump at a time. */
  wake(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  private async pump(): Promise<void> {
    try {
      if (this.inFlight.size === 0) await delay(COALESCE_MS);
      while (!this.stopped && (await this.events.expand(EXPAND_BATCH)) === EXPAND_BATCH);
      while (!this.stopped) {
        const room = this.env.WEBHOOK_DISPATCH_BATCH - this.inFlight.size;
        if (room <= 0) return; // finishing deliveries wake the pump again
        const token = randomUUID();
        const claimed = await this.deliveries.claim(
          token,
          room,
          this.env.WEBHOOK_ENDPOINT_CONCURRENCY,
          this.env.WEBHOOK_LEASE_MS,
        );
        for (const delivery of claimed) {
          const running: Promise<void> = this.attempt(delivery, token).finally(() => {
            this.inFlight.delete(running);
            // Refill once half of what one claim can take is free: one claim for many finished deliveries.
            if (this.inFlight.size <= this.refillAt) this.wake();
          });
          this.inFlight.add(running);
        }
        if (claimed.length < room) return;
      }
    } catch (error) {
      this.logger.warn(`outbox claim: ${(error as Error).message}`);
    }
  }

  /** One attempt of a claimed delivery: the endpoint's health, the record (batched). Never throws. */
  private async attempt(delivery: ClaimedDelivery, token: string): Promise<void> {
    const startedAt = new Date();
    try {
      const { result, label, next, health } = await this.attempts.make(delivery);
      // A failing endpoint backs off before the record: its delivery stays leased until then.
      if (health === 'failing') await this.attempts.endpointFailed(delivery, result);
      const recorded = await this.results.submit({
        id: delivery.id,
        token,
        attempt: {
          startedAt,
          durationMs: result.durationMs,
          outcome: label,
          responseCode: result.status ?? null,
          error: result.error ?? null,
          replica: this.replica,
        },
        next,
      });
      if (!recorded) this.logger.warn({ msg: 'webhook delivery outlived its lease', delivery_id: delivery.id });
      if (health === 'gone') {
        await this.attempts.gone(delivery);
      } else if (health === 'answering' && delivery.probe) {
        if (await this.deliveries.endpointRecovered(delivery.webhook_id)) {
          this.logger.log({ msg: 'webhook endpoint recovered', webhook_id: delivery.webhook_id });
          this.wake();
        }
      }
    } catch (error) {
      // The lease ends and another pass (here or on another replica) tries again.
      this.logger.warn({ msg: 'webhook attempt failed', delivery_id: delivery.id, error: (error as Error).message });
    }
  }
}
