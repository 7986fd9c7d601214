import type {
  ChatMessage,
  ClientRequestMethod,
  ContentItem,
  FilePartDto,
  LogLevel,
  SkillDefinition,
  StoredMessage,
} from '@mcpgw/contracts';
import type { Catalogue } from './catalogue';

/** One file attached to the call: its name and type, and its bytes through the signed URL the gateway made. */
export interface Attachment {
  readonly name: string | undefined;
  readonly mimeType: string | undefined;
  /** The signed download URL (valid for a short while). */
  readonly uri: string;
  /** The part as it came in the chat message. */
  readonly part: FilePartDto;
  /** Download it (streamed: read `body`, or `arrayBuffer()` for small files). Aborted with the call. */
  download(): Promise<Response>;
}

/** The agent a skill runs in: its catalogue, which a skill may change (it is registered anew). */
export interface AgentHandle {
  readonly agentId: string;
  catalogue(): Catalogue;
  /** Change the skills, resources or prompts and register them: clients watching the lists hear of it. */
  update(change: Partial<Catalogue>): Promise<void>;
}

/** What a skill sees of the call it answers. */
export interface SkillContext {
  /** The chat message, as the gateway sent it. */
  readonly message: ChatMessage;
  /** This instance's name (`podId`): in the reply's `meta.pod_id` and the logs. */
  readonly podId: string;
  /** The agent running the skill. */
  readonly agent: AgentHandle;
  /**
   * The call's id (the message's `call_id`): the one its caller sees in the
   * result, webhooks report and `npm run admin -- call show` finds. For log
   * lines that should correlate with the gateway's.
   */
  readonly callId: string | undefined;
  /**
   * Which delivery of the message this is (1: the first). More than 1: an
   * earlier run may have begun elsewhere (an instance died or stopped mid-call),
   * so a skill that must not run twice can refuse.
   */
  readonly attempt: number;
  /**
   * Aborted when the caller cancels the call, when its deadline passes, or when
   * this instance stops. `signal.reason` is a `SkillStoppedError` (`why`:
   * `cancelled` or `deadline`) for the first two.
   */
  readonly signal: AbortSignal;
  /** When the call's time runs out (epoch ms), if the caller gave it a deadline. */
  readonly deadline: number | undefined;
  /** The files attached to the call (`attachments` of the tool call). */
  readonly attachments: readonly Attachment[];
  /** The channel's messages, oldest first: how an agent remembers earlier turns. */
  history(): Promise<StoredMessage[]>;
  /** Tell the caller how far along the skill is (MCP progress). Best effort. */
  progress(progress: number, total?: number, message?: string): void;
  /** A log line for the caller (MCP notifications/message). Best effort. */
  log(level: LogLevel, data: unknown, logger?: string): void;
  /**
   * Ask the MCP client (sampling/createMessage, elicitation/create, roots/list)
   * and wait for its answer. `key` names the question (unique within the call;
   * a 2026-07-28 client sees it as the key of `inputRequests`). Throws a
   * `ClientRequestError` when the client cannot answer (e.g. it did not declare
   * the capability), and the signal's reason when the call stops.
   */
  ask(method: ClientRequestMethod, params: Record<string, unknown>, key?: string): Promise<Record<string, unknown>>;
  /** Tell clients watching the resource (subscriptions/listen, resources/subscribe) that it changed. */
  resourceUpdated(uri: string): void;
  /**
   * The skill will be a while: the gateway may close the client's connection
   * (not the call), and the client polls for the rest (SSE polling, MCP
   * 2025-11-25). Best effort.
   */
  pollLater(): void;
}

/** A skill's answer in full. */
export interface SkillOutput {
  content: ContentItem[];
  /** MCP `structuredContent`: should match the skill's output schema. */
  structured?: Record<string, unknown>;
  /** A tool-level failure the model can read (MCP `isError`). */
  isError?: boolean;
  /** A protocol-level failure (a JSON-RPC error): a task ends `failed` with it (`meta.protocol_error`). */
  protocolError?: { code: number; message: string };
}

/** What a skill may return: a string (one text item), content items, or the whole output. */
export type SkillResult = string | ContentItem[] | SkillOutput;

/** A skill: its definition as registered (the wire's shape), and how it runs. */
export interface Skill<A = Record<string, unknown>> {
  readonly definition: SkillDefinition;
  run(args: A, ctx: SkillContext): Promise<SkillResult>;
}

/** Throw it from a skill: the caller gets a tool error (`isError`) with this text; nothing is retried. */
export class ToolError extends Error {
  constructor(
    message: string,
    /** Structured content to send with the error, if any. */
    readonly structured?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

/**
 * Throw it from a skill that could not do its work for a reason another try
 * may not have (its backend went away mid-call): the message is delivered
 * again (to this instance or another), up to the agent's `maxDeliver`; after
 * that the caller gets the give-up error. Only for skills that are safe to run
 * twice.
 */
export class RedeliverError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedeliverError';
  }
}

/** One text content item. */
export function text(value: string): ContentItem {
  return { type: 'text', text: value };
}

/** Any result a skill may return, as the output the reply carries. */
export function toOutput(result: SkillResult): SkillOutput {
  if (typeof result === 'string') return { content: [text(result)] };
  if (Array.isArray(result)) return { content: result };
  return result;
}
