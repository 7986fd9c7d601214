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
