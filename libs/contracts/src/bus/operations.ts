import type { AgentReply } from '../envelopes/agent-reply';
import type { ChatMessage } from '../envelopes/chat-message';
import type { RegisterAgentRequest } from '../skills/skill-definition';
import type {
  CallOutcome,
  ChannelSummary,
  ListCallsRequest,
  ListChannelsRequest,
  ListedCall,
  ShowChannelRequest,
} from './conversations';
import { BusPattern } from './subjects';

export type Envelope = ChatMessage | AgentReply;

/**
 * A keyed call's key as its posting carries it (apps/message-service/src/messages/README.md,
 * "One key, one posting"): `ref`, a name-based UUID of agent, caller and key, which one
 * stored posting holds at a time; a posting of another id with the same `ref` joins that one.
 * The holder lets go when it is older than `ttl_s` (the key's time to live), when the post
 * `renews` the key (the caller's record of it expired and was taken over), or on ForgetKey.
 */
export interface PostingKey {
  ref: string;
  ttl_s: number;
  renews?: boolean;
}

/** On a duplicate: the stored posting the post joined (by its id, or by its key under another id). */
export interface JoinedPosting {
  id: string;
  created_at: string;
  /** The call id its poster named, if any (`call-id.ts`); else the call id is the posting id's. */
  call_id?: string;
}

/** What a post answers: where the envelope is, and, when it was stored before, the posting it joined. */
export interface Posted {
  channel_id: string;
  seq: number;
  /** True when the envelope (or its key's posting) was already stored. */
  duplicate: boolean;
  /** A chat_message's duplicate: the posting joined. */
  posting?: JoinedPosting;
}

export interface ChannelView {
  id: string;
  agent_id: string;
  created_at: string;
}

/** A stored envelope with its place in the channel. */
export interface StoredMessage {
  seq: number;
  envelope: Envelope;
}

/** A stored envelope with where, when and from whom the message service took it. */
export interface StoredMessageRecord extends StoredMessage {
  channel_id: string;
  /** When the message service stored it (ISO 8601). */
  stored_at: string;
  /** Who sent it, as the bus vouched: `gateway`, `agent:<id>`, `rest` (null: stored before senders were kept). */
  sender: string | null;
}

/** One call as the message service holds it: its chat_message, and its reply once stored. */
export interface StoredCall {
  message: StoredMessageRecord;
  reply?: StoredMessageRecord;
  /** How it ended, as its reply says (conversations.ts). */
  outcome: CallOutcome;
  /** The trace id the chat_message's post carried (`traceparent`), when tracing was on. */
  trace_id: string | null;
}

export type WaitResult = { status: 'replied'; reply: AgentReply } | { status: 'timeout' };

/**
 * The request/reply contract of the bus: operation -> request and response.
 * The typed client and the handlers both check against it.
 */
export interface BusOperations {
  [BusPattern.CreateChannel]: {
    request: { agent_id: string };
    response: ChannelView;
  };
  [BusPattern.PostMessage]: {
    /** `fingerprint` and `key` as for PostAndWait. */
    request: { envelope: Envelope; fingerprint?: string; key?: PostingKey };
    response: Posted;
  };
  [BusPattern.ListMessages]: {
    request: { channel_id: string; limit?: number };
    response: { messages: StoredMessage[] };
  };
  [BusPattern.WaitForReply]: {
    /**
     * `timeout_ms`: how long to wait, counted from when the request arrives: the
     * time the call has left (or a slice of it), never a point in time; the
     * service caps it at WAIT_MAX_MS. See apps/gateway/src/timeouts/README.md.
     */
    request: { channel_id: string; message_id: string; timeout_ms: number };
    response: WaitResult;
  };
  [BusPattern.PostAndWait]: {
    /**
     * `timeout_ms` as for WaitForReply. The envelope may carry the agent's own
     * budget (`meta.timeout_ms`, `timeouts/call-budget.ts`); the wait ends by then too.
     * `fingerprint`: a keyed call's (SHA-256 of its tool and arguments, 64 hex digits),
     * stored with the message; a posting of its id (or of its key) with another is refused
     * (`KeyReusedError`), never joined. `key`: a keyed call's (`PostingKey`).
     */
    request: { envelope: ChatMessage; timeout_ms: number; fingerprint?: string; key?: PostingKey };
    response: Posted & { result: WaitResult };
  };
  [BusPattern.ForgetKey]: {
    /** The posting (by its id) lets go of its key, if it holds one; `forgotten` says whether it did. */
    request: { message_id: string };
    response: { forgotten: boolean };
  };
  [BusPattern.RegisterAgent]: {
    request: RegisterAgentRequest;
    response: { registered: number };
  };
  [BusPattern.StoreReply]: {
    /** The reply's `agent_id` and its channel's agent must be the agent the subject names. */
    request: { envelope: AgentReply };
    response: { channel_id: string; seq: number; duplicate: boolean };
  };
  [BusPattern.FindCall]: {
    /** A call id (`call-id.ts`); a caller's own may name several calls: the newest come first, at most 20. */
    request: { call_id: string };
    response: { calls: StoredCall[] };
  };
  [BusPattern.ListCalls]: {
    /** Tool calls, newest first; `more`: there are older ones. */
    request: ListCallsRequest;
    response: { calls: ListedCall[]; more: boolean };
  };
  [BusPattern.ListChannels]: {
    /** Channels, newest first. */
    request: ListChannelsRequest;
    response: { channels: ChannelSummary[]; more: boolean };
  };
  [BusPattern.ShowChannel]: {
    /**
     * A channel's chat_messages (any kind: tool calls, resource reads, …) with
     * their replies, newest first; fewer than `limit` when the page would not
     * fit on the bus (`more` then says there are older ones).
     */
    request: ShowChannelRequest;
    response: { channel: ChannelSummary; calls: StoredCall[]; more: boolean };
  };
  [BusPattern.AgentHistory]: {
    request: { channel_id: string; limit?: number };
    response: { messages: StoredMessage[] };
  };
  [BusPattern.IsAnswered]: {
    /** A message on one of the agent's own channels; another agent's channel is `not_found`. */
    request: { channel_id: string; message_id: string };
    response: { answered: boolean };
  };
}

export type BusOperation = keyof BusOperations;
export type BusRequest<K extends BusOperation> = BusOperations[K]['request'];
export type BusResponse<K extends BusOperation> = BusOperations[K]['response'];

/** What a handler's failure looks like on the wire. */
export interface BusErrorBody {
  code: BusErrorCode;
  message: string;
  details?: string[];
}

export type BusErrorCode = 'invalid_request' | 'not_found' | 'unavailable' | 'internal';

/** The reply frame of every request: a value or a typed error. */
export type BusReply<T> = { ok: true; data: T } | { ok: false; error: BusErrorBody };
