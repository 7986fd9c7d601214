import {
  BusPattern,
  CALL_ID_PATTERN,
  InvalidRequestError,
  NotFoundError,
  callIdOf,
  isAttemptsExhausted,
  parseListCalls,
  parseListChannels,
  parseShowChannel,
  protocolErrorOf,
  redactSecrets,
  type AgentReply,
  type CallOutcome,
  type ChannelSummary,
  type ChatMessage,
  type Envelope,
  type ListedCall,
  type StoredCall,
  type StoredMessageRecord,
} from '@mcpgw/contracts';
import type { BusClient } from '@mcpgw/bus';
import type { IdempotencyStore, RecordView } from '../../idempotency/idempotency.store';

/**
 * Calls and channels as the operator reads them, once for both faces: the
 * admin CLI (`call show`, `call list`) and the management API (`/calls`,
 * `/channels`). The message service holds the messages (asked over the bus,
 * gateway-only subjects: `ms.calls.find|list`, `ms.channels.list|show`); the
 * gateway's database holds a call's idempotency record. Hop times come from
 * three clocks: the gateway's (a chat_message's `created_at`), the agent's (a
 * reply's `created_at`) and the database's (when each was stored).
 */

/** How long a read waits for the message service (its own queries stop at 5 s). */
export const CONVERSATIONS_TIMEOUT_MS = 8_000;

export interface Timings {
  /** The gateway posted the chat_message (its clock). */
  posted_at: string;
  /** The message service stored it (the database's clock). */
  stored_at: string;
  /** The agent replied (its clock). */
  replied_at: string | null;
  /** The message service stored the reply. */
  reply_stored_at: string | null;
  hops_ms: {
    gateway_to_message_service: number | null;
    message_service_to_agent_reply: number | null;
    agent_reply_to_stored: number | null;
  };
  /** From the post to the stored reply. */
  total_ms: number | null;
}

/** An envelope as the message service stored it, with what it knows of it; secrets cut out (`redactEnvelope`). */
export interface StoredEnvelope {
  seq: number;
  /** Who sent it, as the bus vouched: `gateway`, `agent:<id>`, `rest`. */
  sender: string | null;
  stored_at: string;
  envelope: Record<string, unknown>;
}

/** One call in a list. */
export interface CallSummary {
  call_id: string;
  agent_id: string;
  tool: string;
  caller_id: string;
  channel_id: string;
  message_id: string;
  outcome: CallOutcome;
  /** When the gateway posted it. */
  started_at: string;
  /** From the post to the stored reply (null: no reply). */
  duration_ms: number | null;
  trace_id: string | null;
}

export interface CallPage {
  items: CallSummary[];
  /** `before` for the next (older) page; null when this is the last. */
  next_before: string | null;
}

/** What a chat_message asked for. */
export type TurnKind = 'tool_call' | 'resource_read' | 'prompt_get' | 'complete' | 'message';

/** One chat_message of a channel with its reply: a turn of the conversation. */
export interface Turn {
  kind: TurnKind;
  /** The tool, the resource's URI, the prompt; null for a plain message. */
  name: string | null;
  /** Tool calls only. */
  call_id: string | null;
  caller_id: string;
  outcome: CallOutcome;
  /** Why it failed, or why there is no reply. */
  outcome_detail: string | null;
  pod_id: string | null;
  trace_id: string | null;
  timings: Timings;
  message: StoredEnvelope;
  reply: StoredEnvelope | null;
}

export interface IdempotencyView {
  key: string;
  created_at: string;
  completed_at: string | null;
  expires_at: string;
  replays_stored_result: boolean;
  /** The surface that claimed the key; an A2A record (only when a webhook hears the call) renders the reply again until it completes. */
  surface: string | null;
}

/** One call with both its messages, its hops, its trace and its idempotency record (`call show`). */
export interface CallDetail extends CallSummary {
  outcome_detail: string | null;
  pod_id: string | null;
  timings: Timings;
  idempotency: IdempotencyView | null;
  message: StoredEnvelope;
  reply: StoredEnvelope | null;
}

export interface CallFound {
  call_id: string;
  /** A caller's own call id may name several calls: newest first. */
  calls: CallDetail[];
}

export interface ChannelPage {
  items: ChannelSummary[];
  next_before: string | null;
}

export interface Conversation {
  channel: ChannelSummary;
  /** The latest turns (or those before `before`), oldest first. */
  items: Turn[];
  next_before: string | null;
}

/** Recent tool calls, newest first; `fields` are the filters (agent_id, tool, caller_id, outcome, before, limit). */
export async function listCalls(bus: BusClient, fields: Record<string, unknown>): Promise<CallPage> {
  const request = parseListCalls(fields);
  const { calls, more } = await bus.request(BusPattern.ListCalls, request, CONVERSATIONS_TIMEOUT_MS);
  return { items: calls.map(summaryOf), next_before: more && calls.length ? String(calls.at(-1)!.seq) : null };
}

/** One call by its id: each call it names (a caller's own id may name several), newest first; NotFoundError if none. */
export async function showCall(bus: BusClient, idempotency: IdempotencyStore, callId: string): Promise<CallFound> {
  if (!CALL_ID_PATTERN.test(callId)) {
    throw new InvalidRequestError('callId must be a call id: 1-128 printable ASCII characters, no spaces');
  }
  const { calls } = await bus.request(BusPattern.FindCall, { call_id: callId }, CONVERSATIONS_TIMEOUT_MS);
  if (calls.length === 0) {
    throw new NotFoundError(`no call ${callId}: the message service holds no message with that call id`);
  }
  return { call_id: callId, calls: await Promise.all(calls.map((call) => detailOf(idempotency, call))) };
}

/** Channels, newest first (agent_id, before, limit). */
export async function listChannels(bus: BusClient, fields: Record<string, unknown>): Promise<ChannelPage> {
  const request = parseListChannels(fields);
  const { channels, more } = await bus.request(BusPattern.ListChannels, request, CONVERSATIONS_TIMEOUT_MS);
  return { items: channels, next_before: more && channels.length ? channels.at(-1)!.id : null };
}

/** A channel's conversation: its latest turns (before, limit), oldest first; NotFoundError for no such channel. */
export async function showChannel(
  bus: BusClient,
  channelId: string,
  fields: Record<string, unknown>,
): Promise<Conversation> {
  const request = parseShowChannel({ ...fields, channel_id: channelId });
  const { channel, calls, more } = await bus.request(BusPattern.ShowChannel, request, CONVERSATIONS_TIMEOUT_MS);
  return {
    channel,
    items: calls.map(turnOf).reverse(),
    next_before: more && calls.length ? String(calls.at(-1)!.message.seq) : null,
  };
}

function summaryOf(call: ListedCall): CallSummary {
  return {
    call_id: call.call_id,
    agent_id: call.agent_id,
    tool: call.tool,
    caller_id: call.caller_id,
    channel_id: call.channel_id,
    message_id: call.message_id,
    outcome: call.outcome,
    started_at: call.posted_at,
    duration_ms: between(call.posted_at, call.reply_stored_at),
    trace_id: call.trace_id,
  };
}

/** A chat_message and its reply as a turn of its channel. */
export function turnOf(call: StoredCall): Turn {
  const chat = call.message.envelope as ChatMessage;
  const reply = call.reply?.envelope as AgentReply | undefined;
  const [kind, name] = askedFor(chat);
  return {
    kind,
    name,
    call_id: chat.tool_call ? (chat.call_id ?? callIdOf(chat.id)) : null,
    caller_id: chat.sender.id,
    outcome: call.outcome,
    outcome_detail: outcomeDetail(call.outcome, reply),
    pod_id: typeof reply?.meta?.pod_id === 'string' ? reply.meta.pod_id : null,
    trace_id: call.trace_id,
    timings: timingsOf(call),
    message: storedEnvelope(call.message),
    reply: call.reply ? storedEnvelope(call.reply) : null,
  };
}

async function detailOf(idempotency: IdempotencyStore, call: StoredCall): Promise<CallDetail> {
  const chat = call.message.envelope as ChatMessage;
  const turn = turnOf(call);
  const record = await idempotency.ofMessage(chat.agent_id, chat.sender.id, chat.id);
  return {
    call_id: turn.call_id ?? callIdOf(chat.id),
    agent_id: chat.agent_id,
    tool: turn.name ?? '',
    caller_id: turn.caller_id,
    channel_id: call.message.channel_id,
    message_id: chat.id,
    outcome: turn.outcome,
    started_at: turn.timings.posted_at,
    duration_ms: turn.timings.total_ms,
    trace_id: turn.trace_id,
    outcome_detail: turn.outcome_detail,
    pod_id: turn.pod_id,
    timings: turn.timings,
    idempotency: record ? recordOf(record) : null,
    message: turn.message,
    reply: turn.reply,
  };
}

function askedFor(chat: ChatMessage): [TurnKind, string | null] {
  if (chat.tool_call) return ['tool_call', chat.tool_call.name];
  if (chat.resource_read) return ['resource_read', chat.resource_read.uri];
  if (chat.prompt_get) return ['prompt_get', chat.prompt_get.name];
  if (chat.complete) return ['complete', chat.complete.ref.name ?? chat.complete.ref.uri ?? null];
  return ['message', null];
}

/** Why a call did not end `ok` (a tool error is its content's to say). */
function outcomeDetail(outcome: CallOutcome, reply: AgentReply | undefined): string | null {
  if (outcome === 'no_reply' || !reply) return 'no reply stored (still running, or the gateway stopped waiting)';
  if (isAttemptsExhausted(reply)) return 'the agent could not run the call (deliveries ran out)';
  const protocolError = protocolErrorOf(reply);
  if (protocolError) return `${protocolError.code} ${protocolError.message}`;
  return null;
}

function timingsOf({ message, reply }: StoredCall): Timings {
  const posted = (message.envelope as ChatMessage).created_at;
  const replied = reply ? (reply.envelope as AgentReply).created_at : null;
  return {
    posted_at: posted,
    stored_at: message.stored_at,
    replied_at: replied,
    reply_stored_at: reply?.stored_at ?? null,
    hops_ms: {
      gateway_to_message_service: between(posted, message.stored_at),
      message_service_to_agent_reply: between(message.stored_at, replied),
      agent_reply_to_stored: between(replied, reply?.stored_at ?? null),
    },
    total_ms: between(posted, reply?.stored_at ?? null),
  };
}

/** Milliseconds from one timestamp to another (null when either is missing). */
function between(from: string | null, to: string | null): number | null {
  return from === null || to === null ? null : Date.parse(to) - Date.parse(from);
}

/** A signed file URL's signature (`sig=`, a credential until it expires), in any string of an envelope. */
const URL_SIGNATURE = /([?&]sig=)[^&"\\\s]+/g;

/**
 * An envelope as the operator may see it: every secret of a known shape
 * (`bak_`/`pat_`/`adm_` tokens, JWTs such as RuntimeGrants, as the logs cut
 * them) and every signed URL's signature cut out, wherever they are
 * (arguments, attachments, content). Never in JSON structure: the patterns
 * match no quote or backslash.
 */
export function redactEnvelope(envelope: Envelope): Record<string, unknown> {
  return JSON.parse(redactSecrets(JSON.stringify(envelope)).replace(URL_SIGNATURE, '$1…')) as Record<string, unknown>;
}

function storedEnvelope(record: StoredMessageRecord): StoredEnvelope {
  return {
    seq: record.seq,
    sender: record.sender,
    stored_at: record.stored_at,
    envelope: redactEnvelope(record.envelope),
  };
}

function recordOf(record: RecordView): IdempotencyView {
  return {
    key: record.key,
    created_at: record.created_at.toISOString(),
    completed_at: record.completed_at?.toISOString() ?? null,
    expires_at: record.expires_at.toISOString(),
    replays_stored_result: record.replayable,
    surface: record.surface,
  };
}
