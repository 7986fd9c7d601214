import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  Equals,
  IsArray,
  IsBoolean,
  IsISO8601,
  IsObject,
  IsOptional,
  IsUUID,
  Matches,
  ValidateNested,
} from 'class-validator';
import { AGENT_ID_PATTERN } from '../bus/subjects';
import { ContentItemDto } from './content';

/**
 * `agent_reply`: the agent's answer to one `chat_message`, linked by `in_reply_to`.
 * `content` is MCP content; `is_error` marks a tool-level failure the model can see.
 */
export class AgentReply {
  @Equals('agent_reply')
  type: 'agent_reply';

  @IsUUID()
  id: string;

  @IsUUID()
  channel_id: string;

  @Matches(AGENT_ID_PATTERN)
  agent_id: string;

  @IsUUID()
  in_reply_to: string;

  @IsISO8601()
  created_at: string;

  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => ContentItemDto)
  content: ContentItemDto[];

  @IsOptional()
  @IsObject()
  structured_content?: Record<string, unknown>;

  @IsOptional()
  @IsBoolean()
  is_error?: boolean;

  /** Who answered and how, e.g. `pod_id`. Never secrets. */
  @IsOptional()
  @IsObject()
  meta?: Record<string, unknown>;
}

/**
 * `meta.outcome` of a reply the pod gave instead of a run: the message was
 * delivered more than INBOX_MAX_DELIVER times (its pods kept dying in the
 * skill). The call gets it as a tool error, but it is not the call's result:
 * an idempotency record is released, so a retry with the same key runs again.
 */
export const ATTEMPTS_EXHAUSTED = 'attempts_exhausted';

/** True for a reply that says the agent gave up delivering the call, not that the call ran. */
export function isAttemptsExhausted(reply: Pick<AgentReply, 'meta'>): boolean {
  return reply.meta?.outcome === ATTEMPTS_EXHAUSTED;
}

/**
 * `meta.protocol_error` of a reply: the skill failed as a protocol error (a
 * JSON-RPC error, `{code, message}`), not as a tool result the model can read.
 * A task ends `failed` with it; a plain call still gets the content as a tool error.
 */
export function protocolErrorOf(reply: Pick<AgentReply, 'meta'>): { code: number; message: string } | undefined {
  const error = reply.meta?.protocol_error as { code?: unknown; message?: unknown } | undefined;
  return error && typeof error.code === 'number' && typeof error.message === 'string'
    ? { code: error.code, message: error.message }
    : undefined;
}
