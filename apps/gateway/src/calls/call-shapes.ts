import type { AgentReply, CallEvent, ChatMessage, ContentItem } from '@mcpgw/contracts';
import type { CallTime } from '../timeouts/call-time';

/*
 * What the call pipeline (call-pipeline.service.ts) takes and gives: the
 * surfaces, tasks, idempotency and MRTR speak to it in these shapes.
 */

/**
 * Who called: an MCP surface (`agent`: A, `grant`: B), the REST surface (`rest`: rest/, either
 * credential), the A2A surface (`a2a`: a2a/, either credential), or an operator's playground
 * (`admin`: admin-api/live/).
 */
export type CallSurface = 'agent' | 'grant' | 'rest' | 'a2a' | 'admin';

export interface CallRequest {
  agentId: string;
  /** The caller's stable id (API key id or grant task). */
  callerId: string;
  /** The tool called; `''` for a conversational message (`said`). */
  tool: string;
  arguments: Record<string, unknown>;
  /**
   * A conversational message (A2A's message that names no skill): what was
   * said, posted as the chat_message's `text` and `data` with no `tool_call`,
   * for the agent's message handler. `arguments` then holds only its
   * attachments (and is what a repeated idempotency key is compared with).
   */
  said?: ConversationalContent;
  /**
   * The call's id when the caller named it (surface B's `params.call_id`);
   * otherwise the gateway's, from the chat_message id (`callIdOf`).
   */
  callId?: string;
  /**
   * The chat_message's id when the surface derives it (A2A: from the caller's
   * messageId, so the same message sent again is the same posting, which the
   * message service never runs twice); otherwise a new UUID.
   */
  messageId?: string;
  /** The conversation's channel; a new one is made when absent. */
  channelId?: string;
  /** The call's time, fixed when the surface accepted it (`CallTime.accept`). */
  time: CallTime;
  /** Delivery metadata for the agent, e.g. the names of the credentials the call may use. */
  meta?: Record<string, unknown>;
  /** The HTTP request's id (X-Request-Id), for the call's log lines. */
  requestId?: string;
}

/**
 * The `toolId` of a conversational message, which has no tool: the nil UUID
 * (an idempotency record keeps the tool id it was claimed with as a uuid).
 */
export const NO_TOOL_ID = '00000000-0000-0000-0000-000000000000';

/** What a conversational message says: its text, and its structured part if any. */
export interface ConversationalContent {
  text: string;
  data?: Record<string, unknown>;
}

/** A checked call, ready to post: the tool and the chat_message that carries it. */
export interface PreparedCall {
  toolId: string;
  message: ChatMessage;
  /** The HTTP request's id (CallRequest.requestId): sent along in `Mcpgw-Request-Id`. */
  requestId?: string;
  /**
   * A keyed call's key and fingerprint (`../idempotency/`): the fingerprint is
   * stored with the posted message, and a posting of its id (or its key) with
   * another is refused by the message service (`IdempotencyKeyReusedError`).
   * `ref` (`../idempotency/key-ref.ts`): the posting carries the key, and joins
   * the posting that holds it, whatever its id; `renews`: the caller's record
   * of the key expired and was taken over, so whatever posting still holds it
   * lets go (apps/message-service/src/messages/README.md, "One key, one posting").
   */
  idempotency?: { key: string; fingerprint: Buffer; ref?: string; renews?: boolean };
}

export interface ExecuteOptions {
  /**
   * Progress and log events of the agent, as they come. Watching makes the
   * timeout an idle timeout: each event restarts it (see mcp/README.md).
   */
  onEvent?: (event: CallEvent) => void;
  /** Aborted when the client cancels: the agent is told to stop, the call ends with CallCancelledError. */
  signal?: AbortSignal;
  /**
   * False when this request only joins a message another request posted (an
   * idempotent retry): cancelling it stops this wait, never the agent.
   */
  ownsMessage?: boolean;
  /**
   * True when the reply outlives this request (an idempotency key: it is the
   * result every retry gets), so the agent may work up to the call's limit.
   */
  keepsResult?: boolean;
  /** Told the ids of the message the call is posted as, before it is posted. */
  onMessage?: (ids: CallIds) => void;
  /**
   * When it resolves, the request stops waiting (CallDetachedError) but the
   * agent goes on: MRTR answers the client and a retry continues the call
   * (`resume`). The agent is not told to stop.
   */
  detach?: Promise<void>;
}

/** A posted call's ids: its chat_message, and the call id everyone else sees (`@mcpgw/contracts` call-id.ts). */
export interface CallIds {
  messageId: string;
  callId: string;
}

/** A call already on the bus: what a retry needs to wait for its reply from any replica. */
export interface CallRef {
  agentId: string;
  channelId: string;
  messageId: string;
}

/** resources/read or prompts/get: who asks, where, and the timeout the surface read from `_meta`. */
export type AskRequest = Pick<CallRequest, 'agentId' | 'callerId' | 'channelId'> & { timeoutMs: number };

export interface CallOutcome {
  toolId: string;
  channelId: string;
  messageId: string;
  /** The call's id (`CallIds`): in the result on both surfaces, in webhooks and logs. */
  callId: string;
  /**
   * When the call's chat_message was made (its `created_at`, the gateway's clock): the same for
   * every posting of it, so that a replay can render what the first answer did (A2A's contextId).
   * Absent when the call was continued from its ids alone (`resume`).
   */
  postedAt?: string;
  /**
   * The posting was another request's (stored before by its id, or holding its key): this
   * request joined it. (A request whose first post was stored but not answered on the bus, and
   * posted again, counts as joined: the message service cannot tell it from a repeat.)
   */
  joined?: boolean;
  content: ContentItem[];
  structuredContent?: Record<string, unknown>;
  isError: boolean;
  reply: AgentReply;
}
