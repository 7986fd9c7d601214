import type { AgentReply } from '../envelopes/agent-reply';
import { defineSubject } from './define';
import type { BusResponse } from './operations';
import type { BusPattern } from './subjects';
import {
  checkAgentNotice,
  checkGatewayNotice,
  checkAgentReply,
  checkCallEvent,
  checkCancelRequest,
  checkInputResponse,
} from './payload-checks';

/*
 * Core NATS subjects of one call (or one agent, or one replica), with what
 * travels on each. Nobody listening costs nothing, so a call pays only for
 * the ones someone hears. The inbox itself (JetStream) is in agent-inbox.ts.
 */

/**
 * Progress, log and input-request events of one message in flight (agent -> gateway).
 * The agent's id is in the subject: only its credentials may publish there.
 */
export const CallEvents = defineSubject({
  family: 'calls.*.*.events',
  subject: (prefix: string, agentId: string, messageId: string) => `${prefix}.calls.${agentId}.${messageId}.events`,
  check: checkCallEvent,
});

/**
 * The MCP client's answers to the agent's input requests (gateway -> agent),
 * and `resend` requests (publish your open questions of this call again).
 * The agent's id is in the subject: only its credentials may hear them.
 */
export const CallInput = defineSubject({
  family: 'calls.*.*.input',
  subject: (prefix: string, agentId: string, messageId: string) => `${prefix}.calls.${agentId}.${messageId}.input`,
  check: checkInputResponse,
});

/** Fan-out to every pod of an agent: stop working on a message. */
export const AgentCancel = defineSubject({
  family: 'agents.*.cancel',
  subject: (prefix: string, agentId: string) => `${prefix}.agents.${agentId}.cancel`,
  check: checkCancelRequest,
});

/**
 * Notices from an agent's pods for the clients watching it: a resource was
 * updated (`resource_updated`, nothing else), fanned out to every gateway
 * replica (core NATS: a replica that is down has no stream to tell). Only the
 * agent's credentials may publish here; every gateway holds each agent to a
 * rate (AGENT_NOTICES_PER_SECOND) and drops the rest.
 */
export const AgentNotices = defineSubject({
  family: 'agents.*.notices',
  subject: (prefix: string, agentId: string) => `${prefix}.agents.${agentId}.notices`,
  check: checkAgentNotice,
});

/**
 * Notices about one agent that only gateways send: which of its lists changed
 * (after a registration) and which task changed state. Apart from the agent's
 * own subject, so that no agent can make clients re-list or gateways read task
 * rows by publishing them.
 */
export const GatewayNotices = defineSubject({
  family: 'gateway.agents.*.notices',
  subject: (prefix: string, agentId: string) => `${prefix}.gateway.agents.${agentId}.notices`,
  check: checkGatewayNotice,
});

/**
 * "The reply to this message is stored", with the reply. Heard only by
 * replicas that wait for a message they did not deliver (a joined retry, a
 * wait on another replica).
 */
export const ReplyStored = defineSubject({
  family: 'calls.*.stored',
  subject: (prefix: string, messageId: string) => `${prefix}.calls.${messageId}.stored`,
  check: checkAgentReply,
});

/**
 * Per message service replica and agent: the replies to the chat messages this
 * replica delivered to that agent. A pod sends its reply here (the subject
 * travels with the message, in the `Mcpgw-Reply-To` header), so the replica
 * holding the waiter stores it and answers the gateway with no other hop.
 * Only the agent named in the last token may publish here (NATS permissions),
 * and the replica stores the reply only when that agent is the channel's.
 * Published with the `Mcpgw-Ack` header (the replica acks for the pod), or
 * sent as a request and answered like `ms.messages.post`. See
 * libs/agent-sdk/src/inbox/README.md.
 */
export const ReplicaReplies = defineSubject<
  [replicaId: string, agentId: string],
  AgentReply,
  BusResponse<typeof BusPattern.PostMessage>
>({
  family: 'ms.replicas.*.replies.*',
  subject: (prefix, replicaId, agentId) => `${prefix}.ms.replicas.${replicaId}.replies.${agentId}`,
  check: checkAgentReply,
});
