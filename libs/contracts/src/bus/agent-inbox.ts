import { defineSubject } from './define';
import { checkInboxMessage } from './payload-checks';

const safe = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, '_');

/**
 * JetStream: chat messages for agents, at-least-once. One subject per agent,
 * all in one stream per prefix; the pods of one agent share one durable
 * consumer. The message carries `Mcpgw-Reply-To` (see `ReplicaReplies`).
 */
export const AgentInbox = {
  ...defineSubject({
    family: 'agents.*.inbox',
    subject: (prefix: string, agentId: string) => `${prefix}.agents.${agentId}.inbox`,
    check: checkInboxMessage,
  }),
  /** The stream that holds every agent's inbox under one prefix. */
  streamName: (prefix: string) => `${safe(prefix).toUpperCase()}_AGENT_INBOX`,
  /** All inbox subjects, for the stream definition. */
  wildcard: (prefix: string) => `${prefix}.agents.*.inbox`,
  /** The durable consumer that the pods of one agent share (their queue group). */
  consumerName: (agentId: string) => `agent_${safe(agentId)}`,
} as const;
