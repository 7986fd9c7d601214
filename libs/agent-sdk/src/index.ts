export { Agent, createAgent, type AgentOptions } from './agent';
export type { AgentSettings } from './agent-options';
export type { AgentLogger } from './logger';
export { defineSkill, type SkillSpec } from './skills/define-skill';
export type { ConversationalMessage, MessageHandler } from './skills/message-handler';
export {
  RedeliverError,
  ToolError,
  text,
  type AgentHandle,
  type Attachment,
  type Skill,
  type SkillContext,
  type SkillOutput,
  type SkillResult,
} from './skills/skill';
export type {
  Catalogue,
  Completer,
  Completion,
  PromptMessage,
  PromptProvider,
  ResourceContents,
  ResourceProvider,
} from './skills/catalogue';
export { SkillStoppedError } from './cancellation/cancellations';
export { ClientRequestError } from './replies/questions';
export type { DeliveryHook } from './inbox/consumer';
export type {
  ChatMessage,
  ClientRequestMethod,
  ContentItem,
  LogLevel,
  PromptDefinition,
  ResourceDefinition,
  ResourceTemplateDefinition,
  SkillDefinition,
  StoredMessage,
} from '@mcpgw/contracts';
