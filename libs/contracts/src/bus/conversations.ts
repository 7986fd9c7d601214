import { InvalidRequestError } from '../errors';
import { AGENT_ID_PATTERN } from './subjects';

/**
 * What the operator reads of the message service's channels (the gateway's
 * admin API and CLI: calls, channels): the shapes of `ms.calls.find`,
 * `ms.calls.list`, `ms.channels.list` and `ms.channels.show`, and their bounds.
 * Only the gateway may ask (BUS_ACCESS); agents read their own channels with
 * `ms.agents.<agent>.history`.
 */

/**
 * How a call ended, as the stored messages tell it: `ok`; `tool_error` (the
 * reply's `is_error`); `failed` (a protocol error, `meta.protocol_error`, or
 * deliveries ran out, `meta.outcome` `attempts_exhausted`); `no_reply` (none
 * stored: still running, or the gateway gave up waiting). The message service
 * computes it in SQL (filters need it) from the same fields `isAttemptsExhausted`
 * and `protocolErrorOf` read.
 */
export const CALL_OUTCOMES = ['ok', 'tool_error', 'failed', 'no_reply'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

/** A page of calls or channels: 50 unless told, 200 at most. */
export const CONVERSATION_PAGE = { default: 50, max: 200 } as const;

/** One tool call in a list: its chat_message's facts and its reply's outcome, no envelope. */
export interface ListedCall {
  /** The chat_message's place (`before` of the next page). */
  seq: number;
  /** The envelope's `call_id`, or the gateway's id made from its message id (call-id.ts). */
  call_id: string;
  message_id: string;
  channel_id: string;
  agent_id: string;
  tool: string;
  caller_id: string;
  /** The gateway's clock: the envelope's `created_at`. */
  posted_at: string;
  /** The database's clock: when the message service stored it. */
  stored_at: string;
  outcome: CallOutcome;
  /** When its reply was stored (null: no reply). */
  reply_stored_at: string | null;
  /** The W3C trace id the gateway's request carried (`traceparent`), when tracing was on. */
  trace_id: string | null;
}

export interface ListCallsRequest {
  agent_id?: string;
  tool?: string;
  caller_id?: string;
  outcome?: CallOutcome;
  /** Only calls stored before this `seq` (the previous page's last). */
  before?: number;
  limit?: number;
}

/** A channel (an IM conversation) and what it holds. */
export interface ChannelSummary {
  id: string;
  agent_id: string;
  created_at: string;
  /** chat_messages and agent_replies stored on it. */
  messages: number;
  last_message_at: string | null;
  /** The sender of its first chat_message (a session's channel has one caller). */
  caller_id: string | null;
}

export interface ListChannelsRequest {
  agent_id?: string;
  /** Only channels older than this one (the previous page's last id). */
  before?: string;
  limit?: number;
}

export interface ShowChannelRequest {
  channel_id: string;
  /** Only chat_messages stored before this `seq`. */
  before?: number;
  limit?: number;
}

/*
 * The checks of those requests, once for both ends: the gateway reads its
 * admin API's query strings with them, and the message service checks what
 * arrives with them again (the bus is another process). Numbers may come as
 * strings of digits (a query string, the REST mirror). The names in the
 * messages are the fields' own, which are also the admin API's parameters.
 */

/** A page always has its limit once checked. */
type Checked<T> = T & { limit: number };

export function parseListCalls(fields: Record<string, unknown>): Checked<ListCallsRequest> {
  return {
    agent_id: optionalAgent(fields.agent_id),
    tool: optionalText(fields.tool, 'tool', 128),
    caller_id: optionalText(fields.caller_id, 'caller_id', 200),
    outcome: optionalOutcome(fields.outcome),
    before: optionalSeq(fields.before),
    limit: pageLimit(fields.limit),
  };
}

export function parseListChannels(fields: Record<string, unknown>): Checked<ListChannelsRequest> {
  return {
    agent_id: optionalAgent(fields.agent_id),
    before: fields.before === undefined ? undefined : channelId(fields.before, 'before'),
    limit: pageLimit(fields.limit),
  };
}

export function parseShowChannel(fields: Record<string, unknown>): Checked<ShowChannelRequest> {
  return {
    channel_id: channelId(fields.channel_id, 'channel_id'),
    before: optionalSeq(fields.before),
    limit: pageLimit(fields.limit),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A channel id: a UUID, in lower case as PostgreSQL answers it. */
function channelId(value: unknown, name: string): string {
  if (typeof value !== 'string' || !UUID.test(value))
    throw new InvalidRequestError(`${name} must be a channel id (a UUID)`);
  return value.toLowerCase();
}

/** A whole number of rows, 1 to CONVERSATION_PAGE.max. */
function pageLimit(value: unknown): number {
  if (value === undefined) return CONVERSATION_PAGE.default;
  const n = typeof value === 'string' && /^\d{1,4}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > CONVERSATION_PAGE.max) {
    throw new InvalidRequestError(`limit must be a whole number from 1 to ${CONVERSATION_PAGE.max}`);
  }
  return n;
}

/** Where the previous page ended: a message's `seq`, a positive whole number. */
function optionalSeq(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
    throw new InvalidRequestError('before must be the next_before of a previous page (a positive whole number)');
  }
  return n;
}

function optionalAgent(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !AGENT_ID_PATTERN.test(value)) {
    throw new InvalidRequestError('agent_id must be 1-64 characters of A-Z a-z 0-9 _ -');
  }
  return value;
}

/** One line of text (PostgreSQL refuses a NUL), no longer than any stored value may be. */
function optionalText(value: unknown, name: string, max: number): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length < 1 || value.length > max || /\p{Cc}/u.test(value)) {
    throw new InvalidRequestError(`${name} must be 1-${max} characters, no control characters`);
  }
  return value;
}

function optionalOutcome(value: unknown): CallOutcome | undefined {
  if (value === undefined) return undefined;
  if (!(CALL_OUTCOMES as readonly unknown[]).includes(value)) {
    throw new InvalidRequestError(`outcome must be one of ${CALL_OUTCOMES.join(', ')}`);
  }
  return value as CallOutcome;
}
