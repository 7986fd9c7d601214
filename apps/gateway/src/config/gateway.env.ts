import {
  DatabaseEnv,
  HttpEnv,
  LogEnv,
  ManagementEnv,
  NatsEnv,
  ShutdownEnv,
  TracingEnv,
  validateEnv,
} from '@mcpgw/config';
import { IsInt, IsString, Matches, Max, Min, MinLength, ValidateIf } from 'class-validator';

export class GatewaySettings {
  /** Admin CLI, NATS credentials: the deployment's NATS account public key, or a file holding it (libs/bus/src/auth). */
  @IsString()
  NATS_ACCOUNT_PUBLIC_KEY: string = '';

  /** Admin CLI: a file holding the seed of the account's signing key; it signs pod credentials. Never printed. */
  @IsString()
  NATS_ACCOUNT_SIGNING_SEED_FILE: string = '';

  /** Admin CLI, revocation: a file holding the operator's seed (it re-signs the account JWT). */
  @IsString()
  NATS_OPERATOR_SEED_FILE: string = '';

  /** Admin CLI, revocation: credentials of a system-account user, to push the account JWT to the servers. */
  @IsString()
  NATS_SYSTEM_CREDS: string = '';

  @IsInt()
  @Min(0)
  @Max(65535)
  GATEWAY_PORT: number = 3000;

  /** How long tools/call waits for the agent's reply, unless the call asks for less. */
  @IsInt()
  @Min(100)
  CALL_TIMEOUT_MS: number = 60_000;

  /** The longest timeout a call may ask for in `_meta`. */
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

  /** Events of one stream kept for a resume; older ones are dropped (a resume from before them is refused). */
  @IsInt()
  @Min(1)
  SSE_REPLAY_MAX_EVENTS: number = 1_000;

  /** Bytes of events of one stream kept for a resume; older events are dropped to stay under. */
  @IsInt()
  @Min(1024)
  SSE_REPLAY_MAX_BYTES: number = 4_194_304;

  /** Items per page of tools/list (clients follow nextCursor). */
  @IsInt()
  @Min(1)
  @Max(1000)
  MCP_PAGE_SIZE: number = 100;

  /**
   * Largest MCP request body accepted, in bytes. Capped at start below what the
   * bus carries (NATS `max_payload` less room for the envelope): see transport/body-limit.ts.
   */
  @IsInt()
  @Min(1024)
  MCP_MAX_BODY_BYTES: number = 1_048_576;

  /** Largest tool input schema an agent may register, in bytes of JSON. */
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

  /** Origins browsers may call the MCP endpoints from (comma list; `*` any; `:*` any port). */
  @IsString()
  MCP_ALLOWED_ORIGINS: string = 'http://localhost:*,http://127.0.0.1:*,http://[::1]:*,https://localhost:*';

  /** Host headers accepted on the MCP endpoints (comma list); empty: any. */
  @IsString()
  MCP_ALLOWED_HOSTS: string = '';

  /** `production` requires the secrets a fleet of replicas must share (CONVERSATION_HANDLE_SECRET). */
  @IsString()
  NODE_ENV: string = 'development';

  /**
   * Signs 2026-07-28 conversation handles (at least 32 characters; the same on
   * every replica). Unset: a random one per process, which NODE_ENV=production refuses.
   */
  @ValidateIf((env: GatewaySettings) => env.CONVERSATION_HANDLE_SECRET !== '' || env.NODE_ENV === 'production')
  @MinLength(32, { message: 'CONVERSATION_HANDLE_SECRET must be set (32 characters or more)' })
  CONVERSATION_HANDLE_SECRET: string = '';

  /** Secrets that signed handles before a rotation, comma-separated: still accepted, never used to sign. */
  @Matches(/^([^,]{32,}(,[^,]{32,})*)?$/, { message: 'must be comma-separated secrets of 32 characters or more' })
  CONVERSATION_HANDLE_PREVIOUS_SECRETS: string = '';

  /** How long a conversation handle is valid; one in use is renewed when half of it has passed. */
  @IsInt()
  @Min(60)
  CONVERSATION_HANDLE_TTL_SECONDS: number = 86_400;

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
   * mints with it. Used when the file exists.
   */
  @IsString()
  GRANT_SIGNING_KEY_FILE: string = '.data/grant-signing-key.json';

  /**
   * JSON array of public JWKs that verify RuntimeGrants, selected by kid (list
   * old and new during a rotation). Default: the public half of the signing key.
   */
  @IsString()
  GRANT_VERIFICATION_KEYS: string = '';

  /** The longest lifetime a minted grant may have. */
  @IsInt()
  @Min(1)
  GRANT_MAX_TTL_SECONDS: number = 86_400;

  /** Default per API key and per grant task: tools/call, resources/read and prompts/get in flight at once (0: no limit). */
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

  /** How often a replica tells the others its quota counts (apps/gateway/src/quotas/README.md). */
  @IsInt()
  @Min(100)
  @Max(10_000)
  QUOTA_GOSSIP_INTERVAL_MS: number = 1_000;

  /** How often the in-memory index of active API keys is read again in full (notices keep it current meanwhile). */
  @IsInt()
  @Min(1_000)
  AUTH_CACHE_TTL_MS: number = 60_000;
}

export function loadEnv(env: NodeJS.ProcessEnv = process.env) {
  return validateEnv(
    env,
    NatsEnv,
    DatabaseEnv,
    LogEnv,
    TracingEnv,
    ManagementEnv,
    HttpEnv,
    ShutdownEnv,
    GatewaySettings,
  );
}
export type GatewayEnv = ReturnType<typeof loadEnv>;
export const GATEWAY_ENV = Symbol('GATEWAY_ENV');
