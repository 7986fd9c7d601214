import { Equals, IsIn, IsNumber, IsObject, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';

/** MCP logging levels (RFC 5424 severities), lowest first. */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * `progress`: an agent working on message `in_reply_to` says how far it is.
 * Published on core NATS (`CallEvents.subject`): best effort, for whoever
 * watches the call; the reply itself goes through the message service.
 */
export class ProgressEvent {
  @Equals('progress')
  type: 'progress';

  @IsUUID()
  in_reply_to: string;

  @IsNumber()
  progress: number;

  @IsOptional()
  @IsNumber()
  total?: number;

  @IsOptional()
  @IsString()
  @MaxLength(1000)
  message?: string;
}

/** `log`: an agent's log line about message `in_reply_to` (MCP `notifications/message`). */
export class LogEvent {
  @Equals('log')
  type: 'log';

  @IsUUID()
  in_reply_to: string;

  @IsIn(LOG_LEVELS)
  level: LogLevel;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  logger?: string;

  /** Any JSON value. */
  data: unknown;
}

/** Requests an agent may make of the MCP client in the middle of a call. */
export const CLIENT_REQUEST_METHODS = ['sampling/createMessage', 'elicitation/create', 'roots/list'] as const;
export type ClientRequestMethod = (typeof CLIENT_REQUEST_METHODS)[number];

/**
 * `input_request`: the agent needs something from the MCP client before it can
 * answer (sampling, elicitation). The gateway that streams the call relays it
 * as a JSON-RPC request; the client's answer comes back on `CallInput.subject`.
 */
export class InputRequestEvent {
  @Equals('input_request')
  type: 'input_request';

  @IsUUID()
  in_reply_to: string;

  /**
   * Pairs the answer with the question; unique within the message. A skill may
   * name it (2026-07-28 clients see it as the key of `inputRequests`).
   */
  @IsString()
  @MaxLength(64)
  key: string;

  /** The message's channel: lets any gateway replica wait for the call's reply (MRTR, mcp/input-required). */
  @IsOptional()
  @IsUUID()
  channel_id?: string;

  @IsIn(CLIENT_REQUEST_METHODS)
  method: ClientRequestMethod;

  @IsObject()
  params: Record<string, unknown>;
}

/**
 * `poll`: the agent will be a while. A gateway streaming the call to a client
 * that can resume (an MCP 2025-11-25 session) may close the connection, not
 * the call: the client reconnects with `Last-Event-ID` (SSE polling) and gets
 * the rest, on any replica. Elsewhere it is ignored.
 */
export class PollEvent {
  @Equals('poll')
  type: 'poll';

  @IsUUID()
  in_reply_to: string;
}

/**
 * The client's answer to an input request, published on `CallInput.subject`.
 * Or, with `resend`, no answer: a request to the agent to publish the questions
 * of this call it is still waiting on again (a gateway replica that took over
 * a task may have missed them); `key` is empty then.
 */
export interface InputResponse {
  key: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
  resend?: boolean;
}

export type CallEvent = ProgressEvent | LogEvent | InputRequestEvent | PollEvent;

/** `cancel`: stop working on message `message_id`; send no reply. Fanned out to every pod of the agent. */
export class CancelRequest {
  @Equals('cancel')
  type: 'cancel';

  @IsUUID()
  message_id: string;

  @IsOptional()
  @IsString()
  @MaxLength(1000)
  reason?: string;
}
