import { IsIn, IsInt, Matches, Max, Min } from 'class-validator';

/** The audit trail (apps/gateway/src/audit/README.md). */
export class AuditSettings {
  /**
   * `on`: every tool call, admin action, refused credential (per source and
   * minute) and tool change is recorded, in hash chains; `off`: none.
   */
  @IsIn(['on', 'off'])
  AUDIT: 'on' | 'off' = 'on';

  /**
   * What a tool call's row keeps of its arguments: `digest` (SHA-256 of the canonical JSON only),
   * `redacted` (the arguments, values of keys matching AUDIT_REDACT replaced), or `full`.
   */
  @IsIn(['digest', 'redacted', 'full'])
  AUDIT_ARGUMENTS: 'digest' | 'redacted' | 'full' = 'digest';

  /** With AUDIT_ARGUMENTS=redacted: a key holding any of these words (comma list, any case) has its value replaced. */
  @Matches(/^[A-Za-z0-9_-]+(,[A-Za-z0-9_-]+)*$/, { message: 'must be a comma-separated list of words' })
  AUDIT_REDACT: string = 'pass,secret,token,key,auth,credential,cookie,session';

  /** Refused credentials are one row per source, surface and window of this many seconds (with their count). */
  @IsInt()
  @Min(1)
  @Max(3_600)
  AUDIT_REFUSAL_WINDOW_SECONDS: number = 60;

  /** How often the entries of this process are written (one statement each time). */
  @IsInt()
  @Min(10)
  @Max(10_000)
  AUDIT_FLUSH_INTERVAL_MS: number = 200;

  /** How often each chain's head is anchored: logged, exported and stored (and when its day ends, and at shutdown). */
  @IsInt()
  @Min(1_000)
  AUDIT_ANCHOR_INTERVAL_MS: number = 3_600_000;

  /** Chains of days older than this are dropped whole, their anchors kept (checked hourly). */
  @IsInt()
  @Min(1)
  AUDIT_RETENTION_DAYS: number = 400;

  /** An OTLP/HTTP logs endpoint (…/v1/logs): every audit row and anchor is exported there too. Empty: none. */
  @Matches(/^(https?:\/\/\S+)?$/, { message: 'must be an http(s) URL, or empty' })
  OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: string = '';
}
