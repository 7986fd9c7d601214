import type {
  ChatMessage,
  ClientRequestMethod,
  ContentItem,
  LogLevel,
  SkillDefinition,
  StoredMessage,
} from '@mcpgw/contracts';

/** What a skill sees of the message it answers. */
export interface SkillContext {
  message: ChatMessage;
  podId: string;
  /** Aborted when the caller cancels the call, or the pod shuts down. */
  signal: AbortSignal;
  /** The channel's messages, oldest first: how an agent remembers earlier turns. */
  history(): Promise<StoredMessage[]>;
  /** Tell the caller how far along the skill is (MCP progress). Best effort. */
  progress(progress: number, total?: number, message?: string): void;
  /** A log line for the caller (MCP notifications/message). Best effort. */
  log(level: LogLevel, data: unknown, logger?: string): void;
  /**
   * Ask the MCP client (sampling/createMessage, elicitation/create, roots/list)
   * and wait for its answer. `key` names the question (unique within the call;
   * a 2026-07-28 client sees it as the key of `inputRequests`). Throws when the
   * client cannot answer (e.g. it did not declare the capability).
   */
  ask(method: ClientRequestMethod, params: Record<string, unknown>, key?: string): Promise<Record<string, unknown>>;
  /** Tell clients watching the resource (subscriptions/listen, resources/subscribe) that it changed. */
  resourceUpdated(uri: string): void;
  /** Add or take away a fixture tool or prompt and register again (the conformance suite's list-change hooks). */
  changeList(list: 'tools' | 'prompts'): Promise<void>;
  /**
   * The skill will be a while: the gateway may close the client's connection
   * (not the call), and the client polls for the rest (SSE polling, MCP
   * 2025-11-25). Best effort.
   */
  pollLater(): void;
}

export interface SkillOutput {
  content: ContentItem[];
  structured?: Record<string, unknown>;
  /** A tool-level failure the model can read (MCP `isError`). */
  isError?: boolean;
  /** A protocol-level failure (a JSON-RPC error): a task ends `failed` with it (`meta.protocol_error`). */
  protocolError?: { code: number; message: string };
}

export interface Skill {
  definition: SkillDefinition;
  run(args: Record<string, unknown>, ctx: SkillContext): Promise<SkillOutput>;
}

export const SKILLS = Symbol('SKILLS');

export function text(value: string): ContentItem {
  return { type: 'text', text: value };
}
