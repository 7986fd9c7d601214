import {
  DatabaseEnv,
  DeploymentEnv,
  HttpEnv,
  LogEnv,
  ManagementEnv,
  NatsEnv,
  NoPlaceholderInProduction,
  ShutdownEnv,
  TracingEnv,
  validateEnv,
} from '@mcpgw/config';
import { IsIn, IsInt, IsString, Matches, Max, Min, MinLength, ValidateBy, ValidateIf } from 'class-validator';
import { isIP } from 'node:net';
import { AdminApiSettings, AdminOidcSettings } from './admin-api.env';
import { AuditSettings } from './audit.env';
import { OAuthSettings } from './oauth.env';
import { WebhookSettings } from './webhook.env';
import { TOOL_CHANGE_POLICIES, type ToolChangePolicy } from '../tool-pinning/tool-definitions';

/**
 * The MCP gateway: its port, calls and their timeouts, sessions and resumable
 * streams, what agents may register, conversation handles, tool changes,
 * idempotency, grants, quotas and API keys; and the NATS keys the admin CLI signs with.
 */
export class GatewaySettings {
  /**
   * Admin CLI, NATS credentials: the deployment's NATS account public key (`A…`),
   * or a file holding it, for `agent credentials` (libs/bus/src/auth/README.md).
   */
  @IsString()
  NATS_ACCOUNT_PUBLIC_KEY: string = '';

  /** Admin CLI: a file holding the seed of the account's signing key; it signs pod credentials. Never printed. */
  @IsString()
  NATS_ACCOUNT_SIGNING_SEED_FILE: string = '';

  /** Admin CLI, revocation: a file holding the operator's seed (it re-signs the account JWT on `agent credentials revoke`). */
  @IsString()
  NATS_OPERATOR_SEED_FILE: string = '';

  /** Admin CLI, revocation: credentials of a system-account user, to push the account JWT to the servers. */
  @IsString()
  NATS_SYSTEM_CREDS: string = '';

  /** The public MCP port. */
  @IsInt()
  @Min(0)
  @Max(65535)
  GATEWAY_PORT: number = 3000;

  /** How long tools/call waits for the agent's reply, unless the call asks for less. */
  @IsInt()
  @Min(100)
  CALL_TIMEOUT_MS: number = 60_000;

  /** The longest timeout a call may ask for in `_meta`, and the limit of a call that reports progress (timeouts/README.md). */
  @IsInt()
  @Min(100)
  CALL_TIMEOUT_MAX_MS: number = 600_000;

  /**
   * A call waits for its reply in slices this long: a message service replica
   * that dies holding the wait costs one slice (plus the wait-answer allowance:
   * timeouts/README.md), then the wait is posted again and any replica takes it up.
   */
  @IsInt()
  @Min(100)
  CALL_WAIT_SLICE_MS: number = 10_000;

  /** Idle time after which an MCP session expires. */
  @IsInt()
  @Min(60)
  SESSION_TTL_SECONDS: number = 86_400;

  /**
   * How long a session's SSE stream can be resumed with Last-Event-ID after its
   * last use: its stored events go after this (streams/README.md).
   */
  @IsInt()
  @Min(10)
  SSE_REPLAY_TTL_SECONDS: number = 300;

  /** Events of one stream kept for a resume; older ones are dropped (a resume from before them gets 404). */
  @IsInt()
  @Min(1)
  SSE_REPLAY_MAX_EVENTS: number = 1_000;

  /** Bytes of events of one stream kept for a resume; older events are dropped to stay under. */
  @IsInt()
  @Min(1024)
  SSE_REPLAY_MAX_BYTES: number = 4_194_304;

  /** Items per page of tools/list, resources/list and prompts/list (clients follow nextCursor). */
  @IsInt()
  @Min(1)
  @Max(1000)
  MCP_PAGE_SIZE: number = 100;

  /**
   * Largest MCP request body accepted, in bytes (413 `-32600` above it). Capped at
   * start to NATS's `max_payload` less 64 KiB for the envelope, so every body read
   * can travel on the bus (with NATS's default 1 MiB: 983040): see transport/body-limit.ts.
   */
  @IsInt()
  @Min(1024)
  MCP_MAX_BODY_BYTES: number = 1_048_576;

  /** Largest tool input schema an agent may register, in bytes of JSON (catalogue/README.md). */
  @IsInt()
  @Min(1024)
  SCHEMA_MAX_BYTES: number = 65_536;

  /** Deepest nesting (JSON objects and arrays) of a tool input schema an agent may register. */
  @IsInt()
  @Min(4)
  @Max(1000)
  SCHEMA_MAX_DEPTH: number = 64;

  /** Longest string (or property name) an agent's `pattern` is run against; longer arguments get -32602. */
  @IsInt()
  @Min(1)
  SCHEMA_PATTERN_INPUT_MAX_CHARS: number = 65_536;

  /** Longest URI resources/read and resources/subscribe accept (matched against agents' templates). */
  @IsInt()
  @Min(64)
  RESOURCE_URI_MAX_CHARS: number = 2048;

  /**
   * The reverse proxies in front of the gateway (IP addresses or CIDRs,
   * comma-separated): the client address of a request they pass on is the one
   * their X-Forwarded-For names (what the introspection limit per address
   * counts). Empty: the TCP peer's address. Behind an ingress, list it, or every
   * client counts as the ingress.
   */
  @ValidateBy({
    name: 'trustedProxies',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && trustedProxies(value).every(isAddressOrCidr),
      defaultMessage: () => 'GATEWAY_TRUSTED_PROXIES must be IP addresses or CIDRs, comma-separated',
    },
  })
  GATEWAY_TRUSTED_PROXIES: string = '';

  /** Origins browsers may call the MCP endpoints from (comma list; `*` any; `:*` any port): DNS-rebinding protection. */
  @IsString()
  MCP_ALLOWED_ORIGINS: string = 'http://localhost:*,http://127.0.0.1:*,http://[::1]:*,https://localhost:*';

  /** Host headers accepted on the MCP endpoints (comma list); empty: any. */
  @IsString()
  MCP_ALLOWED_HOSTS: string = '';

  /**
   * Signs 2026-07-28 conversation handles (at least 32 characters; the same on
   * every replica). Unset: a random one per process, which NODE_ENV=production refuses.
   */
  @ValidateIf(
    (env: GatewaySettings & { NODE_ENV?: string }) =>
      env.CONVERSATION_HANDLE_SECRET !== '' || env.NODE_ENV === 'production',
  )
  @MinLength(32, { message: 'CONVERSATION_HANDLE_SECRET must be set (32 characters or more)' })
  @NoPlaceholderInProduction()
  CONVERSATION_HANDLE_SECRET: string = '';

  /** Secrets that signed handles before a rotation, comma-separated: still accepted, never used to sign. */
  @Matches(/^([^,]{32,}(,[^,]{32,})*)?$/, { message: 'must be comma-separated secrets of 32 characters or more' })
  @NoPlaceholderInProduction()
  CONVERSATION_HANDLE_PREVIOUS_SECRETS: string = '';

  /** How long a conversation handle is valid; one in use is renewed when half of it has passed. */
  @IsInt()
  @Min(60)
  CONVERSATION_HANDLE_TTL_SECONDS: number = 86_400;

  /**
   * What a registration whose tool definitions differ from the approved ones
   * does (tool-pinning/README.md): `accept` serves them, `hold` keeps serving
   * the approved ones until an operator approves, `reject` refuses the
   * registration. Per agent: `agent update --tool-changes`. Compose and the
   * prod overlay set `hold`.
   */
  @IsIn(TOOL_CHANGE_POLICIES)
  TOOL_CHANGES: ToolChangePolicy = 'accept';

  /** How long an idempotency key is remembered. */
  @IsInt()
  @Min(1)
  IDEMPOTENCY_TTL_SECONDS: number = 86_400;

  /** How often expired idempotency records are purged (in batches). */
  @IsInt()
  @Min(100)
  IDEMPOTENCY_PURGE_INTERVAL_MS: number = 60_000;

  /**
   * Private JWK (Ed25519, with a kid) that signs RuntimeGrants; the admin CLI
   * mints with it. Used when the file exists; a serving gateway reads only its
   * public half, when GRANT_VERIFICATION_KEYS is empty.
   */
  @IsString()
  GRANT_SIGNING_KEY_FILE: string = '.data/grant-signing-key.json';

  /**
   * JSON array of public JWKs that verify RuntimeGrants, selected by kid (list
   * old and new during a rotation). Default: the public half of the signing key.
   */
  @IsString()
  GRANT_VERIFICATION_KEYS: string = '';

  /** The longest lifetime a minted grant may have, and the oldest grant accepted. */
  @IsInt()
  @Min(1)
  GRANT_MAX_TTL_SECONDS: number = 86_400;

  /**
   * Default per API key and per grant task: tools/call, resources/read and
   * prompts/get in flight at once, across replicas (0: no limit). An agent can
   * have its own (`agent quotas`, quotas/README.md).
   */
  @IsInt()
  @Min(0)
  QUOTA_CONCURRENT_CALLS: number = 64;

  /** Default per API key and per grant task: such calls admitted per second, across all replicas (0: no limit). */
  @IsInt()
  @Min(0)
  QUOTA_CALLS_PER_SECOND: number = 100;

  /** Default per API key: MCP sessions open at once (not ended, not expired) (0: no limit). */
  @IsInt()
  @Min(0)
  QUOTA_SESSIONS: number = 256;

  /** Default per API key: GET streams open at once, across all replicas (0: no limit). */
  @IsInt()
  @Min(0)
  QUOTA_STREAMS: number = 32;

  /**
   * How often a busy replica tells the others its quota counts (one NATS message):
   * the limits may be exceeded across replicas for about this long (quotas/README.md).
   */
  @IsInt()
  @Min(100)
  @Max(10_000)
  QUOTA_GOSSIP_INTERVAL_MS: number = 1_000;

  /** How often the in-memory index of active API keys is read again in full (notices keep it current meanwhile). */
  @IsInt()
  @Min(1_000)
  AUTH_CACHE_TTL_MS: number = 60_000;
}

/** Files and attachments (apps/gateway/src/files/README.md). */
export class FilesSettings {
  /** Where uploaded bytes live: `local` (a directory, FILES_DIR) or `s3` (any S3-compatible store). */
  @IsIn(['local', 's3'])
  FILES_STORAGE: 'local' | 's3' = 'local';

  /** `local` storage: the directory that holds the files. */
  @IsString()
  FILES_DIR: string = '.data/files';

  /** The largest file accepted, in bytes: a larger upload (declared or sent) gets 413. */
  @IsInt()
  @Min(1)
  FILES_MAX_BYTES: number = 104_857_600;

  /**
   * How many live files (uploaded, or presigned and not yet expired) one caller
   * (an API key, or a grant's task) may hold per agent: the next presign gets 429.
   */
  @IsInt()
  @Min(1)
  FILES_QUOTA_FILES: number = 1_000;

  /** How many bytes one caller's live files may add up to per agent (declared sizes count): over it, 429. */
  @IsInt()
  @Min(1)
  FILES_QUOTA_BYTES: number = 10_737_418_240;

  /**
   * How long one upload's bytes may take to arrive (the PUT to an upload URL);
   * every other request keeps HTTP_REQUEST_TIMEOUT_MS. Over it: 408.
   */
  @IsInt()
  @Min(1000)
  FILES_UPLOAD_TIMEOUT_MS: number = 600_000;

  /** How long an upload URL is valid; a file not uploaded by then is purged. */
  @IsInt()
  @Min(10)
  FILES_UPLOAD_URL_TTL_SECONDS: number = 900;

  /** How long a download URL handed to an agent in a tools/call is valid. */
  @IsInt()
  @Min(10)
  FILES_DOWNLOAD_URL_TTL_SECONDS: number = 3_600;

  /** How long an uploaded file is kept (from its upload); then it and its bytes are purged. */
  @IsInt()
  @Min(60)
  FILES_TTL_SECONDS: number = 86_400;

  /** How often expired files are purged (100 a batch). */
  @IsInt()
  @Min(100)
  FILES_PURGE_INTERVAL_MS: number = 60_000;

  /**
   * The gateway's address as clients and agents' pods reach it: upload and
   * download URLs start with it. Empty: http://127.0.0.1:GATEWAY_PORT (one machine).
   */
  @Matches(/^(https?:\/\/[^\s/?#]+(\/[^\s?#]*)?)?$/, { message: 'must be an http(s) URL' })
  FILES_PUBLIC_BASE_URL: string = '';

  /**
   * The gateway's address as agents' pods reach it, for the download URLs put in
   * chat_messages (in Kubernetes, the gateway's Service). Empty: FILES_PUBLIC_BASE_URL.
   */
  @Matches(/^(https?:\/\/[^\s/?#]+(\/[^\s?#]*)?)?$/, { message: 'must be an http(s) URL' })
  FILES_AGENT_BASE_URL: string = '';

  /**
   * Keys that sign file URLs (HMAC-SHA256), as `kid:secret` comma-separated
   * (secrets of 32 characters or more): the first signs, all verify (list the
   * new one first during a rotation). Or a file holding them. Unset: a random
   * key per process, which NODE_ENV=production refuses. Never logged.
   */
  @IsString()
  @NoPlaceholderInProduction()
  FILES_URL_SIGNING_KEYS: string = '';

  /** `s3` storage: the bucket (3 characters or more; created if missing). */
  @ValidateIf((env: FilesSettings) => env.FILES_STORAGE === 's3')
  @MinLength(3, { message: 'FILES_S3_BUCKET must name a bucket (3 characters or more) when FILES_STORAGE=s3' })
  FILES_S3_BUCKET: string = '';

  /** `s3` storage: the endpoint of an S3-compatible store (MinIO…); empty for AWS S3 itself. */
  @IsString()
  FILES_S3_ENDPOINT: string = '';

  /** `s3` storage: the region. */
  @IsString()
  FILES_S3_REGION: string = 'us-east-1';

  /** `s3` storage: path-style URLs (`endpoint/bucket/key`), as MinIO wants. */
  @IsIn(['true', 'false'])
  FILES_S3_FORCE_PATH_STYLE: string = 'true';

  /** `s3` storage: credentials; empty: the AWS SDK's default chain (AWS_ACCESS_KEY_ID, a role…). */
  @IsString()
  FILES_S3_ACCESS_KEY_ID: string = '';

  /** `s3` storage: the secret of FILES_S3_ACCESS_KEY_ID. Never logged. */
  @IsString()
  @NoPlaceholderInProduction()
  FILES_S3_SECRET_ACCESS_KEY: string = '';
}

/** GATEWAY_TRUSTED_PROXIES as a list. */
export function trustedProxies(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function isAddressOrCidr(item: string): boolean {
  const [address, bits, extra] = item.split('/');
  if (extra !== undefined || !isIP(address)) return false;
  if (bits === undefined) return true;
  const max = isIP(address) === 4 ? 32 : 128;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= max;
}

export function loadEnv(env: NodeJS.ProcessEnv = process.env) {
  return validateEnv(
    env,
    DeploymentEnv,
    NatsEnv,
    DatabaseEnv,
    LogEnv,
    TracingEnv,
    ManagementEnv,
    HttpEnv,
    ShutdownEnv,
    GatewaySettings,
    WebhookSettings,
    FilesSettings,
    OAuthSettings,
    AdminApiSettings,
    AdminOidcSettings,
    AuditSettings,
  );
}
export type GatewayEnv = ReturnType<typeof loadEnv>;
export const GATEWAY_ENV = Symbol('GATEWAY_ENV');
