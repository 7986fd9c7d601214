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
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { AGENT_ID_PATTERN } from '../bus/subjects';
import { CALL_ID_PATTERN } from './call-id';
import { CALL_BUDGET_META_KEY } from '../timeouts/call-budget';
import { isWireBudget } from '../timeouts/deadline';

/** `meta.timeout_ms`, when present, is a budget in milliseconds (a number, 0 or more). */
function HasCallBudget(): PropertyDecorator {
  return ValidateBy({
    name: 'hasCallBudget',
    validator: {
      validate: (meta: unknown) =>
        typeof meta !== 'object' ||
        meta === null ||
        !(CALL_BUDGET_META_KEY in meta) ||
        isWireBudget((meta as Record<string, unknown>)[CALL_BUDGET_META_KEY]),
      defaultMessage: () => `meta.${CALL_BUDGET_META_KEY} must be a number of milliseconds, 0 or more`,
    },
  });
}

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

/** What a completion is for: a prompt's argument (`ref/prompt`) or a resource template's variable (`ref/resource`). */
export class CompletionRefDto {
  @IsIn(['ref/prompt', 'ref/resource'])
  type: 'ref/prompt' | 'ref/resource';

  /** `ref/prompt`: the prompt's name. */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;

  /** `ref/resource`: the resource template (its `uriTemplate`). */
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  uri?: string;
}

export class CompletionArgumentDto {
  @IsString()
  @MaxLength(200)
  name: string;

  /** What the user has typed so far. */
  @IsString()
  @MaxLength(2048)
  value: string;
}

/**
 * completion/complete, for an agent that registered `completions`: the agent
 * returns `{completion: {values, total?, hasMore?}}` as structured content.
 */
export class CompleteDto {
  @ValidateNested()
  @Type(() => CompletionRefDto)
  ref: CompletionRefDto;

  @ValidateNested()
  @Type(() => CompletionArgumentDto)
  argument: CompletionArgumentDto;

  /** Arguments (or variables) already resolved, by name. */
  @IsOptional()
  @IsObject()
  arguments?: Record<string, string>;
}

/** Where a file is and what it is: A2A's `FileWithUri`. */
export class FileWithUriDto {
  /** An absolute, signed download URL (GET; it expires). */
  @IsString()
  @MaxLength(4096)
  uri: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  mimeType?: string;
}

/**
 * A file attached to a call (`arguments.attachments` of tools/call), shaped
 * like an A2A FilePart: `{kind: "file", file: {name, mimeType, uri}}`. The
 * gateway adds `metadata` with the file's id, size and sha256.
 */
export class FilePartDto {
  @Equals('file')
  kind: 'file';

  @IsObject()
  @ValidateNested()
  @Type(() => FileWithUriDto)
  file: FileWithUriDto;

  @IsOptional()
  @IsObject()
  metadata?: { file_id?: string; size?: number; sha256?: string } & Record<string, unknown>;
}

/**
 * `chat_message`: what an MCP client (through the gateway) or a user says to an
 * agent on a channel. A tools/call travels as `tool_call`, a resources/read as
 * `resource_read`, a prompts/get as `prompt_get`, a completion/complete as
 * `complete`; a message with none of these is a conversational message (an
 * A2A message that names no skill): its `text` and `data` are what was said,
 * for the agent's message handler (an agent that registered `conversation`).
 * The sender assigns `id`, so re-posting the same message is harmless.
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

  /** A conversational message's structured part (A2A's `data` part), beside its `text`. */
  @IsOptional()
  @IsObject()
  data?: Record<string, unknown>;

  @IsOptional()
  @ValidateNested()
  @Type(() => ToolCallDto)
  tool_call?: ToolCallDto;

  /** A call's id, the one its caller and webhooks see (`call-id.ts`); set by the gateway on `tool_call` and conversational messages. */
  @IsOptional()
  @Matches(CALL_ID_PATTERN)
  call_id?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => ResourceReadDto)
  resource_read?: ResourceReadDto;

  @IsOptional()
  @ValidateNested()
  @Type(() => PromptGetDto)
  prompt_get?: PromptGetDto;

  @IsOptional()
  @ValidateNested()
  @Type(() => CompleteDto)
  complete?: CompleteDto;

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => FilePartDto)
  attachments?: FilePartDto[];

  /**
   * Delivery hints: `timeout_ms`, the time the agent has left for this message
   * (`timeouts/call-budget.ts`); `credentials`, the names of the credentials
   * the call may use; `principal`, an OAuth caller's `{issuer, subject,
   * scopes}` (its token never reaches the agent).
   */
  @IsOptional()
  @IsObject()
  @HasCallBudget()
  meta?: Record<string, unknown>;
}
