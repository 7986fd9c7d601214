import type { SchemaObject } from 'ajv';
import type { AgentReply } from '../envelopes/agent-reply';
import {
  CancelRequest,
  InputRequestEvent,
  LogEvent,
  ProgressEvent,
  type CallEvent,
  PollEvent,
  type InputResponse,
} from '../envelopes/call-events';
import { ChatMessage } from '../envelopes/chat-message';
import { describeErrors, lazyValidator } from '../envelopes/schemas';
import { parseAs, parseEnvelope, type Parsed } from '../envelopes/validate';
import type { PayloadCheck } from './define';

/*
 * The checks of what travels on the per-call subjects, the inbox and the
 * events: the envelope validators of `envelopes/` where the payload is an
 * envelope, compiled schemas of their own for the rest. Each runs once, where
 * the payload arrives from the bus.
 */

/** A chat message in an agent's inbox: stored, so it has its channel. */
export type InboxMessage = ChatMessage & { channel_id: string };

/** `CallCancelled`: a client cancelled the request with this in-flight key. */
export interface CallCancelledEvent {
  key: string;
}

export const checkAgentReply: PayloadCheck<AgentReply> = (plain) => {
  const parsed = parseEnvelope(plain);
  if (parsed.ok && parsed.value.type !== 'agent_reply') return { ok: false, errors: ['type must be agent_reply'] };
  return parsed as Parsed<AgentReply>;
};

export const checkInboxMessage: PayloadCheck<InboxMessage> = (plain) => {
  const parsed = parseAs(ChatMessage, plain);
  if (parsed.ok && !parsed.value.channel_id) return { ok: false, errors: ['channel_id is required'] };
  return parsed as Parsed<InboxMessage>;
};

export const checkCallEvent: PayloadCheck<CallEvent> = (plain) => {
  const type = (plain as { type?: unknown } | null)?.type;
  if (type === 'progress') return parseAs(ProgressEvent, plain);
  if (type === 'input_request') return parseAs(InputRequestEvent, plain);
  if (type === 'poll') return parseAs(PollEvent, plain);
  return parseAs(LogEvent, plain);
};

export const checkCancelRequest: PayloadCheck<CancelRequest> = (plain) => parseAs(CancelRequest, plain);

const inputResponseSchema: SchemaObject = {
  type: 'object',
  required: ['key'],
  properties: {
    key: { type: 'string' },
    result: { type: 'object' },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'number' }, message: { type: 'string' } },
    },
    resend: { type: 'boolean' },
  },
};

export const checkInputResponse: PayloadCheck<InputResponse> = bySchema<InputResponse>(inputResponseSchema);

const callCancelledSchema: SchemaObject = {
  type: 'object',
  required: ['key'],
  properties: { key: { type: 'string' } },
};

export const checkCallCancelled: PayloadCheck<CallCancelledEvent> = bySchema<CallCancelledEvent>(callCancelledSchema);

/**
 * `AgentNotices`: something clients of the agent may be watching changed. The
 * gateway that stored a registration says which lists changed; the agent says
 * a resource was updated. Every gateway replica relays it to its
 * `subscriptions/listen` streams (and to 2025-11-25 sessions subscribed to the resource).
 */
export interface AgentNotice {
  kind: 'tools_list_changed' | 'prompts_list_changed' | 'resources_list_changed' | 'resource_updated' | 'task_status';
  /** The resource, for `resource_updated` (required there). */
  uri?: string;
  /** The task whose state changed, for `task_status` (required there; gateways send it, and read the task's row). */
  task_id?: string;
}

export const AGENT_NOTICE_URI_MAX = 4096;

const agentNoticeSchema: SchemaObject = {
  type: 'object',
  required: ['kind'],
  properties: {
    kind: {
      enum: ['tools_list_changed', 'prompts_list_changed', 'resources_list_changed', 'resource_updated', 'task_status'],
    },
    uri: { type: 'string', minLength: 1, maxLength: AGENT_NOTICE_URI_MAX },
    task_id: { type: 'string', minLength: 1, maxLength: 64 },
  },
};

const agentNoticeShape = bySchema<AgentNotice>(agentNoticeSchema);

const checkNotice: PayloadCheck<AgentNotice> = (plain) => {
  const parsed = agentNoticeShape(plain);
  if (parsed.ok && parsed.value.kind === 'resource_updated' && parsed.value.uri === undefined)
    return { ok: false, errors: ['uri is required for resource_updated'] };
  if (parsed.ok && parsed.value.kind === 'task_status' && parsed.value.task_id === undefined)
    return { ok: false, errors: ['task_id is required for task_status'] };
  return parsed;
};

/** An agent's own notices (`AgentNotices`): resource updates only. */
export const checkAgentNotice: PayloadCheck<AgentNotice> = (plain) => {
  const parsed = checkNotice(plain);
  if (parsed.ok && parsed.value.kind !== 'resource_updated')
    return { ok: false, errors: [`an agent may only send resource_updated, not ${parsed.value.kind}`] };
  return parsed;
};

/** The gateways' notices (`GatewayNotices`): list changes and task states. */
export const checkGatewayNotice: PayloadCheck<AgentNotice> = (plain) => {
  const parsed = checkNotice(plain);
  if (parsed.ok && parsed.value.kind === 'resource_updated')
    return { ok: false, errors: ['resource updates come from the agent (AgentNotices)'] };
  return parsed;
};

/** Most principals one gossip message carries (the busiest first); the rest wait for a later one. */
export const QUOTA_GOSSIP_MAX_ENTRIES = 5_000;

/**
 * `QuotaGossip`: one gateway replica's live counts per principal (key id or
 * grant task, with its agent), about once a second. Each entry is
 * `[principal, calls in flight, open GET streams, calls admitted in the last second]`.
 */
export interface QuotaGossipEvent {
  replica: string;
  entries: [principal: string, calls: number, streams: number, rate: number][];
}

const quotaGossipSchema: SchemaObject = {
  type: 'object',
  required: ['replica', 'entries'],
  properties: {
    replica: { type: 'string', minLength: 1, maxLength: 128 },
    entries: {
      type: 'array',
      maxItems: QUOTA_GOSSIP_MAX_ENTRIES,
      items: {
        type: 'array',
        minItems: 4,
        maxItems: 4,
        items: [
          { type: 'string', minLength: 1, maxLength: 512 },
          { type: 'integer', minimum: 0 },
          { type: 'integer', minimum: 0 },
          { type: 'integer', minimum: 0 },
        ],
      },
    },
  },
};

export const checkQuotaGossip: PayloadCheck<QuotaGossipEvent> = bySchema<QuotaGossipEvent>(quotaGossipSchema);

/** Most calls one `calls` activity message lists; the rest are only counted (`unlisted`). */
export const ACTIVITY_MAX_CALLS = 100;

/** One tools/call that ended, as the live consoles see it: its outcome, never its arguments or result. */
export interface CallActivity {
  agent_id: string;
  tool: string;
  surface: string;
  caller_id: string;
  call_id: string | null;
  outcome: string;
  duration_ms: number;
  at: string;
}

/**
 * `GatewayActivity`: what the consoles watch live (apps/gateway/src/admin-api/live/README.md):
 * the calls that ended on one gateway replica, gathered for up to a second
 * (one message per busy replica per second, never one per call), or an agent's
 * pod that registered. Heard by the replicas with a console connected.
 */
export type ActivityEvent =
  | { kind: 'calls'; calls: CallActivity[]; unlisted: { calls: number; errors: number } }
  | { kind: 'registration'; agent_id: string; pod_id: string; tools: number; at: string };

const activityText = { type: 'string', minLength: 1, maxLength: 512 };
const count = { type: 'integer', minimum: 0 };
const activitySchema: SchemaObject = {
  oneOf: [
    {
      type: 'object',
      required: ['kind', 'calls', 'unlisted'],
      properties: {
        kind: { const: 'calls' },
        calls: {
          type: 'array',
          maxItems: ACTIVITY_MAX_CALLS,
          items: {
            type: 'object',
            required: ['agent_id', 'tool', 'surface', 'caller_id', 'call_id', 'outcome', 'duration_ms', 'at'],
            properties: {
              agent_id: activityText,
              tool: activityText,
              surface: activityText,
              caller_id: activityText,
              call_id: { ...activityText, nullable: true },
              outcome: activityText,
              duration_ms: count,
              at: activityText,
            },
          },
        },
        unlisted: {
          type: 'object',
          required: ['calls', 'errors'],
          properties: { calls: count, errors: count },
        },
      },
    },
    {
      type: 'object',
      required: ['kind', 'agent_id', 'pod_id', 'tools', 'at'],
      properties: {
        kind: { const: 'registration' },
        agent_id: activityText,
        pod_id: activityText,
        tools: count,
        at: activityText,
      },
    },
  ],
};

export const checkActivity: PayloadCheck<ActivityEvent> = bySchema<ActivityEvent>(activitySchema);

/**
 * The schemas of the checks above by payload name, exactly as ajv compiles
 * them; the rules a check adds in code (`checkAgentNotice`: resource_updated
 * only, with its uri) are not in them. For documents derived from the
 * contract (`contractSchemas()`). A deep copy.
 */
export function payloadSchemas(): Record<string, SchemaObject> {
  return structuredClone({
    InputResponse: inputResponseSchema,
    CallCancelledEvent: callCancelledSchema,
    AgentNotice: agentNoticeSchema,
    QuotaGossipEvent: quotaGossipSchema,
    ActivityEvent: activitySchema,
  });
}

/** A check by a schema of its own, compiled at its first use (see `lazyValidator`). */
function bySchema<T>(schema: SchemaObject): PayloadCheck<T> {
  const validate = lazyValidator(schema);
  return (plain) =>
    validate(plain) ? { ok: true, value: plain as T } : { ok: false, errors: describeErrors(validate.errors) };
}
