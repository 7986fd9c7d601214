import type {
  ChatMessage,
  PromptDefinition,
  ResourceDefinition,
  ResourceTemplateDefinition,
  SkillDefinition,
} from '@mcpgw/contracts';
import type { Generated, Json, Timestamp } from '@mcpgw/persistence';
import type { ColumnType, Kysely } from 'kysely';

/**
 * The gateway's tables (schema `gateway`) as the migrations beside this file
 * make them, for Kysely. Change a migration, change this file: nothing checks
 * one against the other but the e2e tests.
 */

export interface AgentsTable {
  id: string;
  workspace_id: string;
  created_at: Generated<Timestamp>;
  updated_at: Generated<Timestamp>;
  resources: Generated<Json<ResourceDefinition[]>>;
  resource_templates: Generated<Json<ResourceTemplateDefinition[]>>;
  prompts: Generated<Json<PromptDefinition[]>>;
  completions: Generated<boolean>;
  /** The agent answers conversational messages (migration 1764722000000). */
  conversation: Generated<boolean>;
  api_keys_enabled: Generated<boolean>;
  oauth_enabled: Generated<boolean>;
  /** The agent's tool-change policy; null: TOOL_CHANGES (migration 1764719000000). */
  tool_changes: 'accept' | 'hold' | 'reject' | null;
  /** Who may read the agent's A2A card (migration 1764721000000). */
  a2a_card: Generated<'public' | 'private'>;
}

export interface ToolsTable {
  id: Generated<string>;
  agent_id: string;
  name: string;
  definition: Json<SkillDefinition>;
  registered_at: Generated<Timestamp>;
}

export type ToolChangeStatus = 'pending' | 'approved' | 'rejected' | 'superseded';

/** A version of an agent's catalogue that a registration proposed (tool-pinning/README.md). */
export interface ToolChangesTable {
  agent_id: string;
  version: number;
  status: ToolChangeStatus;
  /** Of the proposed definitions, in any order (`proposalDigest`). */
  digest: string;
  /** The new and changed definitions. */
  proposed: Json<SkillDefinition[]>;
  /** The approved definitions of the changed tools when it was proposed (the diff's left side). */
  approved_before: Json<SkillDefinition[]>;
  created_at: Generated<Timestamp>;
  decided_at: Timestamp | null;
  /** Who decided: `admin:<token id>`, `cli`, or `policy:accept`. */
  decided_by: string | null;
}

/** One pod of an agent: registered, last heard (registration or presence), leaving (migration 1764717000000). */
export interface AgentPodsTable {
  agent_id: string;
  pod_id: string;
  registered_at: Generated<Timestamp>;
  last_seen_at: Generated<Timestamp>;
  interval_ms: Generated<number>;
  left_at: Timestamp | null;
}

export interface ApiKeysTable {
  id: string;
  agent_id: string;
  digest: Buffer;
  label: string | null;
  created_at: Generated<Timestamp>;
  revoked_at: Timestamp | null;
}

export interface McpSessionsTable {
  id: string;
  agent_id: string;
  principal: string;
  channel_id: string;
  protocol_version: string;
  client_info: Json<unknown> | null;
  created_at: Generated<Timestamp>;
  last_seen_at: Generated<Timestamp>;
  expires_at: Timestamp;
  ended_at: Timestamp | null;
  log_level: string | null;
  client_capabilities: Json<Record<string, unknown> | null> | null;
  /** resources/subscribe of this session (at most MAX_SESSION_RESOURCE_SUBSCRIPTIONS URIs). */
  resource_subscriptions: Generated<string[]>;
}

export interface IdempotencyRecordsTable {
  agent_id: string;
  caller: string;
  key: string;
  fingerprint: Buffer;
  tool_id: string;
  /** The chat_message, or its `{id, created_at}` alone for a key that names its posting (A2A's: idempotency/recorded-message.ts). */
  message: Json<ChatMessage | Pick<ChatMessage, 'id' | 'created_at'>>;
  result: string | null;
  /** The surface whose shape `result` is in (a CallSurface); null: an MCP surface's, from before REST. */
  surface: string | null;
  created_at: Generated<Timestamp>;
  completed_at: Timestamp | null;
  expires_at: Timestamp;
}

export interface GrantRevocationsTable {
  grant_id: string;
  revoked_at: Generated<Timestamp>;
  expires_at: Timestamp;
}

export interface PersonalAccessTokensTable {
  id: string;
  digest: Buffer;
  label: string | null;
  created_at: Generated<Timestamp>;
  revoked_at: Timestamp | null;
}

/** Admin tokens of the management API (admin-api/README.md): digests only. */
export interface AdminTokensTable {
  id: string;
  digest: Buffer;
  label: string | null;
  created_at: Generated<Timestamp>;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
}

/** Browser sessions of the management API: digests only, each tied to its admin token. */
export interface AdminSessionsTable {
  id: string;
  digest: Buffer;
  token_id: string;
  created_at: Generated<Timestamp>;
  expires_at: Timestamp;
  ended_at: Timestamp | null;
}

/** One-time login codes of the console (the login link `npm start` prints): digests only, used once. */
export interface AdminLoginCodesTable {
  id: string;
  digest: Buffer;
  created_at: Generated<Timestamp>;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

/** Per-agent quota overrides; NULL: the QUOTA_* default (quotas/README.md). */
export interface AgentQuotasTable {
  agent_id: string;
  concurrent_calls: number | null;
  calls_per_second: number | null;
  sessions: number | null;
  streams: number | null;
  updated_at: Generated<Timestamp>;
}

/** NATS users issued to agents' pods by the admin CLI (public keys only), and when revoked. */
export interface NatsCredentialsTable {
  user_key: string;
  agent_id: string;
  issued_at: Generated<Timestamp>;
  revoked_at: Timestamp | null;
  /** The user JWT's `exp`; null: never expires. */
  expires_at: Timestamp | null;
}

/** A webhook of an agent (webhooks/README.md); secrets are encrypted (webhook-secrets.ts). */
export interface WebhooksTable {
  id: string;
  agent_id: string;
  url: string;
  events: string[];
  secret: Buffer;
  previous_secret: Buffer | null;
  previous_secret_expires_at: Timestamp | null;
  created_at: Generated<Timestamp>;
  disabled_at: Timestamp | null;
  disabled_reason: string | null;
  /** The principal that made it (`apikey:<id>`, a grant's task); null: the operator's (admin CLI). */
  owner: string | null;
  /** The endpoint's health: failing since (null: healthy), probes failed, next probe due, last error. */
  failing_since: Timestamp | null;
  failures: Generated<number>;
  retry_at: Timestamp | null;
  last_error: string | null;
  /** An A2A push config (a2a/README.md): the task it hears, the client's id for it, its sealed headers. */
  a2a_task_id: ColumnType<string | null, string | null | undefined, string | null>;
  a2a_config_id: ColumnType<string | null, string | null | undefined, string | null>;
  a2a_headers: ColumnType<Buffer | null, Buffer | null | undefined, Buffer | null>;
}

/** One call or task outcome, until the dispatcher fans it out to the deliveries of the webhooks that hear it. */
export interface WebhookEventsTable {
  id: Generated<string>;
  agent_id: string;
  /** The principal whose call it was: its own webhooks hear it (and the operator's). */
  caller_id: string | null;
  event_type: string;
  payload: string;
  created_at: Generated<Timestamp>;
  /** Held by the replica that wrote it, which sends it itself (direct send), until then. */
  lease_token: string | null;
  lease_until: Timestamp | null;
  /** A push event: the A2A task whose configs hear it, and the one config it is for (null: all). */
  a2a_task_id: ColumnType<string | null, string | null | undefined, string | null>;
  webhook_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** The webhook outbox: one row per event and webhook; its id is the `webhook-id` header. */
export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  event_type: string;
  payload: string;
  status: Generated<'pending' | 'delivered' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: Generated<Timestamp>;
  lease_token: string | null;
  lease_until: Timestamp | null;
  created_at: Generated<Timestamp>;
  finished_at: Timestamp | null;
  last_error: string | null;
}

/** One HTTP attempt of a delivery. */
export interface WebhookAttemptsTable {
  id: Generated<string>;
  delivery_id: string;
  started_at: Timestamp;
  duration_ms: number;
  outcome: string;
  response_code: number | null;
  error: string | null;
  replica: string;
}

/** Uploaded files' metadata; the bytes are in FILES_STORAGE (files/README.md). */
export interface FilesTable {
  id: string;
  agent_id: string;
  caller: string;
  filename: string;
  content_type: string;
  /** bigint: read as a string. */
  size: ColumnType<string, number, number>;
  sha256: Buffer | null;
  state: Generated<'pending' | 'uploading' | 'uploaded'>;
  created_at: Generated<Timestamp>;
  /** When the upload in progress (state `uploading`) began. */
  upload_started_at: Timestamp | null;
  uploaded_at: Timestamp | null;
  expires_at: Timestamp;
}

export interface McpStreamsTable {
  id: string;
  session_id: string;
  kind: 'request' | 'listen';
  created_at: Generated<Timestamp>;
  ended_at: Timestamp | null;
  attached_until: Timestamp | null;
  touched_at: Generated<Timestamp>;
  /** Events up to this sequence were dropped (bounds, age): a resume from before it cannot be served. */
  dropped_through: Generated<number>;
}

export interface McpStreamEventsTable {
  stream_id: string;
  seq: number;
  data: string;
  created_at: Generated<Timestamp>;
}

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export interface McpTasksTable {
  id: string;
  agent_id: string;
  /** `apikey:<key id>`: only this caller sees the task. */
  principal: string;
  tool: string;
  channel_id: string;
  message_id: string;
  status: TaskStatus;
  /** The agent's open questions, by key (MRTR `inputRequests`). */
  input_requests: ColumnType<Record<string, unknown>, string | undefined, string>;
  result: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  error: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  created_at: Generated<Timestamp>;
  updated_at: Generated<Timestamp>;
  /** The agent's deadline for the call: unanswered by then, the task fails. */
  ends_at: Timestamp;
  expires_at: Timestamp;
  /** It has (had) an A2A push config: its state changes go to the webhook outbox. */
  push: Generated<boolean>;
  /** A keyed call's fingerprint (an A2A message's; migration 1764725000000); null for other tasks. */
  fingerprint: Buffer | null;
}

/** A caller's signing secret for the A2A push notifications of one agent (sealed, as webhook secrets are). */
export interface A2aPushSecretsTable {
  agent_id: string;
  owner: string;
  secret: Buffer;
  /** Until `previous_secret_expires_at` (a rotation's window), the old secret signs beside the new one. */
  previous_secret: Buffer | null;
  previous_secret_expires_at: Timestamp | null;
  created_at: Generated<Timestamp>;
}

/** The audit trail (schema `audit`, migration 1764720000000; audit/README.md): append-only. */
export interface AuditRecordsTable {
  chain: string;
  seq: number;
  kind: 'tool_call' | 'admin_action' | 'auth_failure' | 'tool_change';
  at: Timestamp;
  surface: string | null;
  principal: string | null;
  agent_id: string | null;
  tool: string | null;
  call_id: string | null;
  outcome: string | null;
  error_code: string | null;
  duration_ms: number | null;
  pod_id: string | null;
  replayed: boolean | null;
  arguments_digest: string | null;
  arguments: Json<unknown> | null;
  detail: Json<Record<string, unknown>> | null;
  prev_hash: string;
  hash: string;
}

/** Each chain's head when it was anchored, and the anchors of chains dropped by retention. */
export interface AuditAnchorsTable {
  chain: string;
  seq: number;
  hash: string;
  at: Timestamp;
  /** The chain's rows were dropped (AUDIT_RETENTION_DAYS); the anchor is what is left. */
  dropped: Generated<boolean>;
}

export interface GatewayTables {
  'audit.records': AuditRecordsTable;
  'audit.anchors': AuditAnchorsTable;
  agents: AgentsTable;
  tools: ToolsTable;
  tool_changes: ToolChangesTable;
  agent_pods: AgentPodsTable;
  api_keys: ApiKeysTable;
  mcp_sessions: McpSessionsTable;
  idempotency_records: IdempotencyRecordsTable;
  grant_revocations: GrantRevocationsTable;
  personal_access_tokens: PersonalAccessTokensTable;
  admin_tokens: AdminTokensTable;
  admin_sessions: AdminSessionsTable;
  admin_login_codes: AdminLoginCodesTable;
  agent_quotas: AgentQuotasTable;
  nats_credentials: NatsCredentialsTable;
  webhooks: WebhooksTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  files: FilesTable;
  mcp_streams: McpStreamsTable;
  mcp_stream_events: McpStreamEventsTable;
  mcp_tasks: McpTasksTable;
  a2a_push_secrets: A2aPushSecretsTable;
}

/** What the gateway's stores inject (`@InjectKysely()`). */
export type GatewayDb = Kysely<GatewayTables>;
