import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { AGENT_ID_PATTERN, POD_ID_PATTERN } from '../bus/subjects';
import { PromptDefinition, ResourceDefinition, ResourceTemplateDefinition } from './catalogue-definitions';

/** How a tool runs as a task (MCP `execution.taskSupport`): never, when the client can, or only so. */
export const TASK_SUPPORT = ['forbidden', 'optional', 'required'] as const;
export type TaskSupport = (typeof TASK_SUPPORT)[number];

/** MCP `Tool.execution`: whether the tool may run as a task (io.modelcontextprotocol/tasks). Absent: forbidden. */
export class SkillExecution {
  @IsOptional()
  @IsIn(TASK_SUPPORT)
  taskSupport?: TaskSupport;
}

export const SIDE_EFFECT_CLASSES = ['read', 'write', 'destructive'] as const;
export type SideEffectClass = (typeof SIDE_EFFECT_CLASSES)[number];

/** Credential names: what a RuntimeGrant lists and a skill requires. */
export const CREDENTIAL_NAME_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;

/** MCP tool names: 1-128 characters of A-Z a-z 0-9 _ - . (MCP 2025-11-25). */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

/** A skill as an agent registers it; the gateway exposes it as an MCP tool. */
export class SkillDefinition {
  @Matches(TOOL_NAME_PATTERN)
  name: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  title?: string;

  @IsString()
  @MaxLength(4000)
  description: string;

  /** JSON Schema (an object schema) for the tool's arguments. */
  @IsObject()
  input_schema: Record<string, unknown>;

  @IsOptional()
  @IsObject()
  output_schema?: Record<string, unknown>;

  @IsOptional()
  @IsIn(SIDE_EFFECT_CLASSES)
  side_effect_class?: SideEffectClass;

  @IsOptional()
  @IsString()
  kind?: string;

  /** MCP tool annotations: readOnlyHint, destructiveHint, idempotentHint, openWorldHint. */
  @IsOptional()
  @IsObject()
  annotations?: Record<string, unknown>;

  /** Names of the credentials the skill needs; a task without them may not call it. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @Matches(CREDENTIAL_NAME_PATTERN, { each: true })
  required_credentials?: string[];

  /**
   * MCP client capabilities the skill cannot run without, as ClientCapabilities
   * (e.g. `{ "sampling": {} }`): a 2026-07-28 request whose client did not
   * declare them is refused with -32021 before the agent sees it.
   */
  @IsOptional()
  @IsObject()
  required_client_capabilities?: Record<string, unknown>;

  /** MCP `execution`: `taskSupport` says whether a client declaring the tasks extension gets a task (gateway tasks/README.md). */
  @IsOptional()
  @ValidateNested()
  @Type(() => SkillExecution)
  execution?: SkillExecution;

  /** Protocol metadata shown with the tool (MCP `_meta`). */
  @IsOptional()
  @IsObject()
  _meta?: Record<string, unknown>;
}

/** `registry.agents.<agent>.register`: a pod announces its agent and skills. */
export class RegisterAgentRequest {
  @Matches(AGENT_ID_PATTERN)
  workspace_id: string;

  @Matches(AGENT_ID_PATTERN)
  agent_id: string;

  /** The pod registering (POD_ID_PATTERN): the gateway keeps a record per pod (at most 256 per agent). */
  @Matches(POD_ID_PATTERN)
  pod_id: string;

  @IsArray()
  @ArrayMaxSize(500)
  @ValidateNested({ each: true })
  @Type(() => SkillDefinition)
  skills: SkillDefinition[];

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @ValidateNested({ each: true })
  @Type(() => ResourceDefinition)
  resources?: ResourceDefinition[];

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => ResourceTemplateDefinition)
  resource_templates?: ResourceTemplateDefinition[];

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @ValidateNested({ each: true })
  @Type(() => PromptDefinition)
  prompts?: PromptDefinition[];

  /**
   * The agent answers completion/complete for its prompts' arguments and its
   * templates' variables (MCP `completions`); without it the gateway answers
   * every completion with no values, and never asks the agent.
   */
  @IsOptional()
  @IsBoolean()
  completions?: boolean;

  /**
   * The agent answers conversational messages (a `chat_message` with no
   * `tool_call`: A2A's messages that name no skill); without it the gateway
   * answers them `UnsupportedOperationError` and never asks the agent.
   */
  @IsOptional()
  @IsBoolean()
  conversation?: boolean;
}
