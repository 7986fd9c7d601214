import { NoPlaceholderInProduction } from '@mcpgw/config';
import { IsInt, IsString, Matches, Max, Min, MinLength, ValidateBy, ValidateIf } from 'class-validator';
import { parseAllowedHosts } from '../webhooks/ssrf-guard';

/** WEBHOOK_ALLOWED_HOSTS parses (the same parser the SSRF guard uses), so a typo stops the start. */
function AllowedHostsList(): PropertyDecorator {
  return ValidateBy({
    name: 'allowedHostsList',
    validator: {
      validate: (value: unknown) => {
        try {
          return typeof value === 'string' && (parseAllowedHosts(value), true);
        } catch {
          return false;
        }
      },
      defaultMessage: (args) => {
        try {
          parseAllowedHosts(String(args?.value));
        } catch (error) {
          return (error as Error).message;
        }
        return 'WEBHOOK_ALLOWED_HOSTS must be a string';
      },
    },
  });
}

/** Webhooks: signing secrets at rest, SSRF, retries, the outbox (apps/gateway/src/webhooks/README.md). */
export class WebhookSettings {
  /**
   * Encrypts webhook secrets at rest (AES-256-GCM under a key derived from it; at
   * least 32 characters; the same for every replica and the admin CLI). Unset:
   * the key in WEBHOOK_SECRET_KEY_FILE, made on first use; NODE_ENV=production requires it.
   */
  @ValidateIf(
    (env: WebhookSettings & { NODE_ENV?: string }) => env.WEBHOOK_SECRET_KEY !== '' || env.NODE_ENV === 'production',
  )
  @MinLength(32, { message: 'WEBHOOK_SECRET_KEY must be set (32 characters or more)' })
  @NoPlaceholderInProduction()
  WEBHOOK_SECRET_KEY: string = '';

  /**
   * Keys that encrypted webhook secrets before a rotation, comma-separated: they
   * still open what they sealed, never seal. Remove one once `webhook reseal-secrets`
   * reports nothing left that needs it.
   */
  @Matches(/^([^,]{32,}(,[^,]{32,})*)?$/, { message: 'must be comma-separated keys of 32 characters or more' })
  @NoPlaceholderInProduction()
  WEBHOOK_SECRET_PREVIOUS_KEYS: string = '';

  /** Without WEBHOOK_SECRET_KEY (development): the file holding the key, made on first use (mode 0600). */
  @IsString()
  WEBHOOK_SECRET_KEY_FILE: string = '.data/webhook-secret-key';

  /**
   * Hosts or IP addresses webhooks may reach although they are private, loopback,
   * link-local or IPv4-in-IPv6 (comma list). Each entry is `host`, `host:port`,
   * `address`, `address:port`, `[v6]` or `[v6]:port`: with a port it admits that
   * port only; without one, ports 80 and 443 only (the URL's port, or its scheme's
   * default). Matched against the URL's host or any address it resolves to.
   * Empty: only public addresses (webhooks/README.md#ssrf).
   */
  @IsString()
  @AllowedHostsList()
  WEBHOOK_ALLOWED_HOSTS: string = '';

  /** How long one delivery attempt may take (connect to the end of the response). */
  @IsInt()
  @Min(100)
  @Max(60_000)
  WEBHOOK_TIMEOUT_MS: number = 10_000;

  /** Attempts of a delivery before it is marked failed (`webhook redeliver` sends it again). */
  @IsInt()
  @Min(1)
  @Max(50)
  WEBHOOK_MAX_ATTEMPTS: number = 8;

  /**
   * An endpoint that fails backs off as a whole: the first step's delay; each next
   * one doubles, with jitter, up to WEBHOOK_RETRY_MAX_MS. One probe per step.
   */
  @IsInt()
  @Min(10)
  WEBHOOK_RETRY_BASE_MS: number = 5_000;

  /** The longest backoff step. */
  @IsInt()
  @Min(10)
  WEBHOOK_RETRY_MAX_MS: number = 3_600_000;

  /**
   * How long a replica holds a delivery it claimed: a replica that dies holding
   * it lets another take it after this. Must exceed WEBHOOK_TIMEOUT_MS (checked at start).
   */
  @IsInt()
  @Min(1_000)
  WEBHOOK_LEASE_MS: number = 60_000;

  /**
   * How often a replica looks for due deliveries besides the notices of new ones
   * (retries, lost notices); no polling while no webhook exists.
   */
  @IsInt()
  @Min(50)
  WEBHOOK_POLL_INTERVAL_MS: number = 1_000;

  /** Deliveries a replica sends at once, in all. */
  @IsInt()
  @Min(1)
  @Max(1_000)
  WEBHOOK_DISPATCH_BATCH: number = 256;

  /** Deliveries a replica sends at once to one endpoint (a failing one gets one: its probe). */
  @IsInt()
  @Min(1)
  @Max(1_000)
  WEBHOOK_ENDPOINT_CONCURRENCY: number = 32;

  /**
   * An endpoint failing this long (every probe since) is disabled, with the reason
   * in `webhook list`; `webhook enable` brings it back.
   */
  @IsInt()
  @Min(1)
  WEBHOOK_DISABLE_AFTER_SECONDS: number = 86_400;

  /** Webhooks one principal (an API key, over REST) may hold per agent; the operator's (admin CLI) are not counted. */
  @IsInt()
  @Min(1)
  @Max(1_000)
  WEBHOOK_MAX_PER_OWNER: number = 10;

  /**
   * How long finished deliveries (delivered or failed), with their attempts, are kept for
   * `webhook deliveries`; a delivery still pending this long fails as expired.
   */
  @IsInt()
  @Min(1)
  WEBHOOK_RETENTION_SECONDS: number = 604_800;

  /** How often a replica deletes finished deliveries older than WEBHOOK_RETENTION_SECONDS (1,000 a statement). */
  @IsInt()
  @Min(100)
  WEBHOOK_PURGE_INTERVAL_MS: number = 3_600_000;

  /** After `webhook rotate-secret`, how long the previous secret still signs (both signatures are sent). */
  @IsInt()
  @Min(0)
  WEBHOOK_ROTATION_WINDOW_SECONDS: number = 86_400;
}
