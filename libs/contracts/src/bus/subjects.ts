/**
 * Every NATS subject the apps use, in one place. A prefix (BUS_PREFIX, default
 * `mcpgw`) namespaces a whole deployment so that two stacks, or two test runs,
 * can share one NATS server without hearing each other.
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
  /** gateway: an agent pod registers its skills. */
  RegisterAgent: 'registry.agents.register',
} as const;
export type BusPattern = (typeof BusPattern)[keyof typeof BusPattern];

/** Fan-out events: every replica of the listening app gets a copy. */
export const BusEvent = {
  /** gateway replicas: a client cancelled a request; the replica running it stops it. */
  CallCancelled: 'gateway.calls.cancelled',
} as const;
export type BusEvent = (typeof BusEvent)[keyof typeof BusEvent];

export function subject(prefix: string, pattern: string): string {
  return `${prefix}.${pattern}`;
}

/** JetStream: chat messages for agents, at-least-once. */
export const AgentInbox = {
  /** The stream that holds every agent's inbox under one prefix. */
  streamName: (prefix: string) => `${prefix.replace(/[^A-Za-z0-9_-]/g, '_').toUpperCase()}_AGENT_INBOX`,
  /** All inbox subjects, for the stream definition. */
  wildcard: (prefix: string) => `${prefix}.agents.*.inbox`,
  /** One agent's inbox. */
  subject: (prefix: string, agentId: string) => `${prefix}.agents.${agentId}.inbox`,
  /** The durable consumer that the pods of one agent share (their queue group). */
  consumerName: (agentId: string) => `agent_${agentId.replace(/[^A-Za-z0-9_-]/g, '_')}`,
} as const;

/**
 * Core NATS, per message service replica: the replies to the chat messages this
 * replica delivered. A pod sends its reply here (the subject travels with the
 * message, in the `Mcpgw-Reply-To` header), so the replica holding the waiter
 * stores it and answers the gateway with no other hop. See apps/agent-pod/src/inbox/README.md.
 */
export const ReplicaReplies = {
  subject: (prefix: string, replicaId: string) => `${prefix}.ms.replicas.${replicaId}.replies`,
} as const;

/** NATS headers of the direct reply path. */
export const ReplyHeaders = {
  /** On an inbox message: where its reply goes (a ReplicaReplies subject). */
  replyTo: 'Mcpgw-Reply-To',
  /** On a reply published to a replica: the JetStream ack subject of the message it answers. */
  ack: 'Mcpgw-Ack',
} as const;

/**
 * Core NATS, per call: "the reply to this message is stored", with the reply.
 * Heard only by replicas that wait for a message they did not deliver (a
 * joined retry, a wait on another replica); nobody listening costs nothing.
 */
export const ReplyStored = {
  subject: (prefix: string, messageId: string) => `${prefix}.calls.${messageId}.stored`,
} as const;

/** Core NATS, per call: progress and log events of one message in flight (agent -> gateway). */
export const CallEvents = {
  subject: (prefix: string, messageId: string) => `${prefix}.calls.${messageId}.events`,
} as const;

/** Core NATS, per call: the MCP client's answers to the agent's input requests (gateway -> agent). */
export const CallInput = {
  subject: (prefix: string, messageId: string) => `${prefix}.calls.${messageId}.input`,
} as const;

/** Core NATS, fan-out to every pod of an agent: stop working on a message. */
export const AgentCancel = {
  subject: (prefix: string, agentId: string) => `${prefix}.agents.${agentId}.cancel`,
} as const;

/** Agent ids travel in subjects and URLs: keep them to a safe alphabet. */
export const AGENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
