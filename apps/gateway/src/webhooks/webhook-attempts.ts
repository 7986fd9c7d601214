import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { METRICS_REGISTRY } from '@mcpgw/observability';
import { Counter, type Registry } from 'prom-client';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { openPushHeaders } from './push-headers';
import { SsrfGuard } from './ssrf-guard';
import { WebhookDeliveriesStore, type ClaimedDelivery, type Next } from './webhook-deliveries.store';
import { SecretBox, signatureHeader } from './webhook-secrets';
import { closeWebhookPools, sendWebhook, type SendResult } from './webhook-sender';

/** Opened secrets kept in memory at most (the cache is emptied past it). */
const OPENED_SECRETS_MAX = 10_000;

/** What an attempt says of its endpoint (`endpointHealth`). */
export type EndpointHealth = 'gone' | 'failing' | 'answering' | 'unknown';

/** One attempt's outcome: what came back, what becomes of the delivery, what it says of the endpoint. */
export interface AttemptOutcome {
  result: SendResult;
  label: string;
  next: Next;
  health: EndpointHealth;
}

/**
 * One attempt to deliver, whoever holds the delivery (a claim of the
 * dispatcher, or the replica that wrote the outcome and sends it directly):
 * check the address (SSRF guard, after DNS), sign with the webhook's secrets,
 * send, judge the answer; and what an answer does to its endpoint (backing
 * off, disabled on 410). Counts every attempt by outcome.
 */
@Injectable()
export class WebhookAttempts implements OnApplicationShutdown {
  private readonly logger = new Logger(WebhookAttempts.name);
  private readonly guard: SsrfGuard;
  private box?: SecretBox;
  /** Opened secrets by webhook and ciphertext (`opened`). */
  private readonly openedSecrets = new Map<string, string>();
  private readonly attempts: Counter<'outcome'>;
  private readonly disabled: Counter<'reason'>;

  constructor(
    private readonly deliveries: WebhookDeliveriesStore,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.guard = new SsrfGuard(env.WEBHOOK_ALLOWED_HOSTS);
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
    // At 0 from the start: a series born at 1 is no increase to Prometheus, and the first disable would not alert.
    for (const reason of ['gone', 'failing']) this.disabled.inc({ reason }, 0);
  }

  /** After every sender has settled (their beforeApplicationShutdown): the connection pools. */
  async onApplicationShutdown(): Promise<void> {
    await closeWebhookPools();
  }

  /** Check the address, sign with the webhook's secrets, send; what became of it. Never throws for the receiver. */
  async make(delivery: ClaimedDelivery): Promise<AttemptOutcome> {
    const outcome = await this.send(delivery);
    this.attempts.inc({ outcome: outcome.label });
    return outcome;
  }

  /** The endpoint backs off one step (or is disabled, once it has failed for WEBHOOK_DISABLE_AFTER_SECONDS). */
  async endpointFailed(delivery: ClaimedDelivery, result: SendResult): Promise<void> {
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

  /** The receiver answered 410 Gone: the webhook is disabled, its pending deliveries failed. */
  async gone(delivery: ClaimedDelivery): Promise<void> {
    await this.deliveries.disable(delivery.webhook_id, delivery.agent_id, 'the receiver answered 410 Gone');
    this.disabled.inc({ reason: 'gone' });
    this.logger.warn({ msg: 'webhook disabled: 410 Gone', webhook_id: delivery.webhook_id });
  }

  private async send(delivery: ClaimedDelivery): Promise<AttemptOutcome> {
    const url = new URL(delivery.url);
    const resolved = await this.guard.resolve(url);
    if (!resolved.ok) {
      const error = `refused: ${resolved.reason}`;
      return notSent('refused', error);
    }
    let secrets: string[];
    let extra: Record<string, string> = {};
    try {
      secrets = this.secretsOf(delivery);
      if (delivery.a2a_headers) extra = openPushHeaders(this.secretBox, delivery.webhook_id, delivery.a2a_headers);
    } catch (error) {
      // The key changed (README: secrets at rest): no attempt can sign, so none is made.
      return notSent('failed', (error as Error).message);
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      // An A2A push config's own headers first: they cannot replace the signature's.
      ...extra,
      'content-type': 'application/json',
      'user-agent': 'mcpgw-webhooks/1',
      'webhook-id': delivery.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secrets, delivery.id, timestamp, delivery.payload),
    };
    const result = await sendWebhook(url, resolved, headers, delivery.payload, this.env.WEBHOOK_TIMEOUT_MS);
    return { result, ...this.judge(result, delivery.attempts + 1), health: endpointHealth(result) };
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
      secret = this.secretBox.open(webhookId, sealed);
      if (this.openedSecrets.size >= OPENED_SECRETS_MAX) this.openedSecrets.clear();
      this.openedSecrets.set(key, secret);
    }
    return secret;
  }

  private get secretBox(): SecretBox {
    return (this.box ??= SecretBox.fromEnv(this.env));
  }
}

/** An attempt never sent (a refused address, a secret that does not open): it says nothing of the receiver. */
function notSent(label: string, error: string): AttemptOutcome {
  return {
    result: { error, durationMs: 0, notSent: true },
    label,
    next: { status: 'failed', error },
    health: 'unknown',
  };
}

/**
 * What an attempt says of its endpoint, whatever becomes of the delivery:
 * `gone` (410), `failing` (408, 429, 5xx, no answer: retry later, all of it),
 * `answering` (any other answer: it is up, even if this delivery failed).
 */
function endpointHealth(result: SendResult): EndpointHealth {
  const { status } = result;
  if (status === 410) return 'gone';
  if (status === undefined || status === 408 || status === 429 || status >= 500) return 'failing';
  return 'answering';
}
