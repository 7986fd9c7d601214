import { Type } from 'class-transformer';
import {
  Equals,
  IsArray,
  IsIn,
  IsISO8601,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { AGENT_ID_PATTERN } from '../bus/subjects';

/** Who wrote a message on a channel. */
export class SenderDto {
  @IsIn(['mcp_client', 'agent', 'user'])
  kind: 'mcp_client' | 'agent' | 'user';

  @IsString()
  @MaxLength(200)
  id: string;
}

/** The structured call a `tools/call` becomes. */
export class ToolCallDto {
  @IsString()
  @MaxLength(128)
  name: string;

  @IsObject()
  arguments: Record<string, unknown>;
}

/** resources/read: the agent returns `{contents: [...]}` as structured content. */
export class ResourceReadDto {
  @IsString()
  @MaxLength(2048)
  uri: string;
}

/** prompts/get: the agent returns `{description?, messages: [...]}` as structured content. */
export class PromptGetDto {
  @IsString()
  @MaxLength(200)
  name: string;

  @IsObject()
  arguments: Record<string, string>;
}

/** A file the agent may download, shaped like an A2A FilePart. */
export class FilePartDto {
  @Equals('file')
  kind: 'file';

  @IsString()
  file_id: string;

  @IsOptional()
  @IsString()
  name?: string;

  @IsOptional()
  @IsString()
  mime_type?: string;

  @IsString()
  uri: string;
}

/**
 * `chat_message`: what an MCP client (through the gateway) or a user says to an
 * agent on a channel. A tools/call travels as `tool_call`, a resources/read as
 * `resource_read`, a prompts/get as `prompt_get`; the sender assigns
 * `id`, so re-posting the same message is harmless.
 */
export class ChatMessage {
  @Equals('chat_message')
  type: 'chat_message';

  @IsUUID()
  id: string;

  /** Omitted when posting to a new channel: the message service fills it in. */
  @IsOptional()
  @IsUUID()
  channel_id?: string;

  @Matches(AGENT_ID_PATTERN)
  agent_id: string;

  @ValidateNested()
  @Type(() => SenderDto)
  sender: SenderDto;

  @IsISO8601()
  created_at: string;

  @IsOptional()
  @IsString()
  text?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => ToolCallDto)
  tool_call?: ToolCallDto;

  @IsOptional()
  @ValidateNested()
  @Type(() => ResourceReadDto)
  resource_read?: ResourceReadDto;

  @IsOptional()
  @ValidateNested()
  @Type(() => PromptGetDto)
  prompt_get?: PromptGetDto;

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => FilePartDto)
  attachments?: FilePartDto[];

  /** Delivery hints, e.g. `deadline` (ISO time after which nobody waits for the reply). */
  @IsOptional()
  @IsObject()
  meta?: Record<string, unknown>;
}
