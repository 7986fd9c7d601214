/**
 * Subject names of the bus. Request/reply operations are named here and typed
 * in `operations.ts`; events, per-call subjects and the inbox are declared with
 * their payloads in `events.ts`, `call-subjects.ts` and `agent-inbox.ts`.
 * A prefix (BUS_PREFIX, default `mcpgw`) namespaces a whole deployment so
 * that two stacks, or two test runs, can share one NATS server without
 * hearing each other.
 */
export const DEFAULT_BUS_PREFIX = 'mcpgw';

/** Request/reply operations, relative to the prefix. */
export const BusPattern = {
  /** message-service: create an IM channel for an agent. */
  CreateChannel: 'ms.channels.create',
  /** message-service: store an envelope on a channel (and deliver or wake as its type says). */
  PostMessage: 'ms.messages.post',
  /** message-service: a channel's history, oldest first. */
  ListMessages: 'ms.messages.list',
  /** message-service: the reply to message M on channel C, or a timeout. */
  WaitForReply: 'ms.channels.wait',
  /** message-service: post a chat_message and wait for its reply, in one round trip. */
  PostAndWait: 'ms.messages.post_and_wait',
  /** message-service: a keyed posting lets go of its key (its call was cancelled or given up): the next posting with it runs. */
  ForgetKey: 'ms.messages.forget_key',
  /** message-service: the chat_message(s) of one call id and their replies (`admin call show`). */
  FindCall: 'ms.calls.find',
  /** message-service: the newest tool calls, filtered, with their outcomes (the admin API's calls page). */
  ListCalls: 'ms.calls.list',
  /** message-service: the newest channels, with their counts (the admin API's channels page). */
  ListChannels: 'ms.channels.list',
  /** message-service: one channel as the operator reads it: each chat_message with its reply, newest first. */
  ShowChannel: 'ms.channels.show',
  /**
   * gateway: an agent pod registers its skills. Agent-scoped (see `agentSubject`):
   * the `*` is the agent's id, and only that agent's credentials may publish there.
   */
  RegisterAgent: 'registry.agents.*.register',
  /** message-service, agent-scoped: store an agent_reply of this agent (at any replica). */
  StoreReply: 'ms.agents.*.replies',
  /** message-service, agent-scoped: the history of a channel of this agent. */
  AgentHistory: 'ms.agents.*.history',
  /**
   * message-service, agent-scoped: whether a reply to a message of this agent is
   * stored. A pod asks before it runs a redelivered message it did not answer
   * itself: answered on another pod, whose ack was lost, it is acked instead.
   */
  IsAnswered: 'ms.agents.*.answered',
} as const;
export type BusPattern = (typeof BusPattern)[keyof typeof BusPattern];

export function subject(prefix: string, pattern: string): string {
  return `${prefix}.${pattern}`;
}

/**
 * Operations whose subject names the agent that sends them (its `*`): the
 * NATS permissions let only that agent's credentials publish there, so the
 * receiver knows who sent the request from the subject (libs/bus/src/auth).
 */
export const AGENT_SCOPED_OPERATIONS = [
  BusPattern.RegisterAgent,
  BusPattern.StoreReply,
  BusPattern.AgentHistory,
  BusPattern.IsAnswered,
] as const;
export type AgentScopedOperation = (typeof AGENT_SCOPED_OPERATIONS)[number];

/** The subject of an agent-scoped operation for one agent, relative to the prefix. */
export function agentSubject(pattern: AgentScopedOperation, agentId: string): string {
  return pattern.replace('*', agentId);
}

/**
 * The agent a received subject names at the `*` of `pattern` (`prefix.` included
 * in `subject`), or undefined when the subject is not of that pattern.
 */
export function agentOfSubject(prefix: string, pattern: string, received: string): string | undefined {
  const want = subject(prefix, pattern).split('.');
  const got = received.split('.');
  if (want.length !== got.length) return undefined;
  let agent: string | undefined;
  for (let i = 0; i < want.length; i++) {
    if (want[i] === '*') agent ??= got[i];
    else if (want[i] !== got[i]) return undefined;
  }
  return agent && AGENT_ID_PATTERN.test(agent) ? agent : undefined;
}

/** NATS headers of the direct reply path (see call-subjects.ts `ReplicaReplies`). */
export const ReplyHeaders = {
  /** On an inbox message: where its reply goes (a ReplicaReplies subject). */
  replyTo: 'Mcpgw-Reply-To',
  /** On a reply published to a replica: the JetStream ack subject of the message it answers. */
  ack: 'Mcpgw-Ack',
} as const;
export type ReplyHeader = (typeof ReplyHeaders)[keyof typeof ReplyHeaders];

/**
 * Header of a call's messages (gateway → message service → agent pod): the HTTP
 * request's id (X-Request-Id), so that every app's log lines about the call carry it.
 * The trace id rides in `traceparent` when tracing is on.
 */
export const CallHeaders = {
  requestId: 'Mcpgw-Request-Id',
} as const;

/** Agent ids travel in subjects and URLs: keep them to a safe alphabet. */
export const AGENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/**
 * Pod ids travel in payloads and are stored per agent (registration, presence):
 * the agent id alphabet plus `.` and `:` (a pod id is `<hostname>-<pid>` by
 * default, and host names have dots), at most 200 characters.
 */
export const POD_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/;
