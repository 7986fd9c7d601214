import { Equals, IsIn, IsNumber, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';

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

export type CallEvent = ProgressEvent | LogEvent;

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
