import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { METRICS_REGISTRY } from '@mcpgw/observability';
import { Draining } from '@mcpgw/runtime';
import { Counter, type Registry } from 'prom-client';
import { randomUUID } from 'node:crypto';
import { CacheInvalidationService } from '../cache/cache-invalidation.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { OUTBOX_CHANNEL } from '../database/database';
import { SsrfGuard } from './ssrf-guard';
import {
  WebhookDeliveriesStore,
  type ClaimedDelivery,
  type FinishedAttempt,
  type Next,
} from './webhook-deliveries.store';
import { WebhookOutbox } from './webhook-outbox.service';
import { SecretBox, signatureHeader } from './webhook-secrets';
import { closeWebhookPools, sendWebhook, type SendResult } from './webhook-sender';
import { GroupWriter } from './group-writer';
import { backlogGauges } from './webhook-metrics';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * An idle pump (nothing in flight) waits this long after a wake-up, so that the notices of
 * many calls make one pass: a stream of calls to a dead endpoint costs a pass per 20 ms, not one
 * per commit. A pump with deliveries in flight refills at once.
 */
const COALESCE_MS = 20;
/** Outcomes fanned out to deliveries per statement. */
const EXPAND_BATCH = 1_000;
/** Opened secrets kept in memory at most (the cache is emptied past it). */
const OPENED_SECRETS_MAX = 10_000;

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
  private readonly guard: SsrfGuard;
  private readonly replica: string;
  private box?: SecretBox;
  private pollTimer?: NodeJS.Timeout;
  private purgeTimer?: NodeJS.Timeout;
  private stopped = false;
  /** The claim pass under way, if any (one at a time). */
  private pumping?: Promise<void>;
  private again = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** In flight at or below this, a finished delivery wakes the pump to claim more. */
  private readonly refillAt: number;
  private readonly attempts: Counter<'outcome'>;
  private readonly disabled: Counter<'reason'>;
  /** Attempts recorded many at a time: one statement for all that ended meanwhile; each learns whether its lease held. */
  private readonly results = new GroupWriter<FinishedAttempt, boolean>(async (done) => {
    const recorded = await this.deliveries.finishMany(done);
    return done.map((attempt) => recorded.has(attempt.id));
  });
  /** Opened secrets by webhook and ciphertext (`opened`). */
  private readonly openedSecrets = new Map<string, string>();

  constructor(
    private readonly deliveries: WebhookDeliveriesStore,
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
    this.attempts = new Counter({
      name: 'mcpgw_webhook_attempts_total',
      help: 'webhook delivery attempts of this replica, by outcome (delivered, retry, failed, gone, refused)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.disabled = new Counter({
      name: 'mcpgw_webhook_disabled_total',
      help: 'webhooks this replica disabled: gone (410) or failing (for WEBHOOK_DISABLE_AFTER_SECONDS)',
      labelNames: ['reason'],
      registers: [registry],
    });
    backlogGauges(registry, () => (this.outbox.any ? this.deliveries.backlog() : undefined));
    this.guard = new SsrfGuard(env.WEBHOOK_ALLOWED_HOSTS);
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
    await closeWebhookPools();
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
      while (!this.stopped && (await this.deliveries.expand(EXPAND_BATCH)) === EXPAND_BATCH);
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

  /** One attempt: check the address, sign, send; the endpoint's health; the record (batched). Never throws. */
  private async attempt(delivery: ClaimedDelivery, token: string): Promise<void> {
    const startedAt = new Date();
    try {
      const { result, outcome } = await this.send(delivery);
      this.attempts.inc({ outcome: outcome.label });
      const health = endpointHealth(result);
      // A failing endpoint backs off before the record: its delivery stays leased until then.
      if (health === 'failing') await this.endpointFailed(delivery, result);
      const recorded = await this.results.add({
        id: delivery.id,
        token,
        attempt: {
          startedAt,
          durationMs: result.durationMs,
          outcome: outcome.label,
          responseCode: result.status ?? null,
          error: result.error ?? null,
          replica: this.replica,
        },
        next: outcome.next,
      });
      if (!recorded) this.logger.warn({ msg: 'webhook delivery outlived its lease', delivery_id: delivery.id });
      if (health === 'gone') {
        await this.deliveries.disable(delivery.webhook_id, delivery.agent_id, 'the receiver answered 410 Gone');
        this.disabled.inc({ reason: 'gone' });
        this.logger.warn({ msg: 'webhook disabled: 410 Gone', webhook_id: delivery.webhook_id });
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

  /** The endpoint backs off one step (or is disabled, once it has failed for WEBHOOK_DISABLE_AFTER_SECONDS). */
  private async endpointFailed(delivery: ClaimedDelivery, result: SendResult): Promise<void> {
    const error = result.status !== undefined ? `HTTP ${result.status}` : (result.error ?? 'no response');
    const { disabled } = await this.deliveries.endpointFailed(
      delivery.webhook_id,
      delivery.probe,
      error,
      {
        baseMs: this.env.WEBHOOK_RETRY_BASE_MS,
        maxMs: this.env.WEBHOOK_RETRY_MAX_MS,
        retryAfterMs: result.retryAfterMs ?? 0,
      },
      this.env.WEBHOOK_DISABLE_AFTER_SECONDS,
    );
    if (disabled) {
      this.disabled.inc({ reason: 'failing' });
      this.logger.warn({
        msg: 'webhook disabled: failing too long',
        webhook_id: delivery.webhook_id,
        reason: disabled,
      });
    }
  }

  /** Check the address, sign with the webhook's secrets, send; what became of it. */
  private async send(
    delivery: ClaimedDelivery,
  ): Promise<{ result: SendResult; outcome: { label: string; next: Next } }> {
    const url = new URL(delivery.url);
    const resolved = await this.guard.resolve(url);
    if (!resolved.ok) {
      const error = `refused: ${resolved.reason}`;
      return {
        result: { error, durationMs: 0, notSent: true },
        outcome: { label: 'refused', next: { status: 'failed', error } },
      };
    }
    let secrets: string[];
    try {
      secrets = this.secretsOf(delivery);
    } catch (error) {
      // The key changed (README: secrets at rest): no attempt can sign, so none is made.
      const message = (error as Error).message;
      return {
        result: { error: message, durationMs: 0, notSent: true },
        outcome: { label: 'failed', next: { status: 'failed', error: message } },
      };
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'mcpgw-webhooks/1',
      'webhook-id': delivery.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secrets, delivery.id, timestamp, delivery.payload),
    };
    const result = await sendWebhook(url, resolved, headers, delivery.payload, this.env.WEBHOOK_TIMEOUT_MS);
    return { result, outcome: this.judge(result, delivery.attempts + 1) };
  }

  /** 2xx delivered; 410 gone; 408, 429, 5xx and no response retried; anything else failed at once. */
  private judge(result: SendResult, attempt: number): { label: string; next: Next } {
    const { status } = result;
    if (status !== undefined && status >= 200 && status < 300)
      return { label: 'delivered', next: { status: 'delivered' } };
    if (status === 410) return { label: 'gone', next: { status: 'failed', error: 'HTTP 410 Gone: webhook disabled' } };
    const error = status !== undefined ? `HTTP ${status}` : (result.error ?? 'no response');
    const retryable = status === undefined || status === 408 || status === 429 || status >= 500;
    if (!retryable) return { label: 'failed', next: { status: 'failed', error } };
    if (attempt >= this.env.WEBHOOK_MAX_ATTEMPTS) {
      return { label: 'failed', next: { status: 'failed', error: `${error} (after ${attempt} attempts)` } };
    }
    // Due again at once: its endpoint's backoff (endpointFailed) decides when it is claimed.
    return { label: 'retry', next: { status: 'pending', retryInMs: 0, error } };
  }

  /** The current secret, and the previous one while its rotation window lasts. */
  private secretsOf(delivery: ClaimedDelivery): string[] {
    const secrets = [this.opened(delivery.webhook_id, delivery.secret)];
    if (
      delivery.previous_secret &&
      delivery.previous_secret_expires_at &&
      delivery.previous_secret_expires_at > new Date()
    ) {
      secrets.push(this.opened(delivery.webhook_id, delivery.previous_secret));
    }
    return secrets;
  }

  /**
   * A sealed secret, opened once per ciphertext (a rotation or a reseal changes the
   * ciphertext, so the cache never serves a stale secret): decrypting per delivery
   * showed in the profile at the rate of the calls.
   */
  private opened(webhookId: string, sealed: Buffer): string {
    const key = `${webhookId}:${sealed.toString('base64')}`;
    let secret = this.openedSecrets.get(key);
    if (secret === undefined) {
      // Opened at the first delivery: a gateway without webhooks never needs the key (nor makes its dev file).
      const box = (this.box ??= SecretBox.fromEnv(this.env));
      secret = box.open(webhookId, sealed);
      if (this.openedSecrets.size >= OPENED_SECRETS_MAX) this.openedSecrets.clear();
      this.openedSecrets.set(key, secret);
    }
    return secret;
  }
}

/**
 * What an attempt says of its endpoint, whatever becomes of the delivery:
 * `gone` (410), `failing` (408, 429, 5xx, no answer: retry later, all of it),
 * `answering` (any other answer: it is up, even if this delivery failed).
 * An attempt never sent (a refused address, a secret that does not open) says nothing of it.
 */
function endpointHealth(result: SendResult): 'gone' | 'failing' | 'answering' | 'unknown' {
  if (result.notSent) return 'unknown';
  const { status } = result;
  if (status === 410) return 'gone';
  if (status === undefined || status === 408 || status === 429 || status >= 500) return 'failing';
  return 'answering';
}
