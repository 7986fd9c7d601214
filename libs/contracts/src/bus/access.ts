import { AgentInbox } from './agent-inbox';
import {
  AgentCancel,
  AgentNotices,
  CallEvents,
  CallInput,
  GatewayNotices,
  ReplicaReplies,
  ReplyStored,
} from './call-subjects';
import { CallCancelled, GatewayActivity, QuotaGossip } from './events';
import { AgentPresence } from './presence';
import { BusPattern } from './subjects';

/** The identities on the bus: each app, and the pods of one agent. */
export type BusRole = 'gateway' | 'message-service' | 'agent';

/**
 * Who may send (publish, request) and who may hear (subscribe) on one subject
 * family. `agent` is the pods of one agent, and only ever for the subjects that
 * name it: the `*` at `agentToken` (0-based among the family's `*`s) is the
 * agent's own id in its permissions.
 */
export interface SubjectAccess {
  readonly family: string;
  readonly send: readonly BusRole[];
  readonly hear: readonly BusRole[];
  readonly agentToken?: number;
  /**
   * Senders ask and hearers answer (request/reply): the answer goes only to
   * the asker's own reply inbox (`_INBOX.<prefix>.<identity>.…`), never to
   * any other reply subject a request names (libs/bus/src/auth/reply-inboxes.ts).
   */
  readonly request?: true;
}

/**
 * Every subject family of the bus contract, with its senders and hearers. The
 * NATS permissions of every identity are derived from this table
 * (libs/bus/src/auth/permissions.ts), and a test checks that every subject
 * declared in this folder is here: a new subject cannot be forgotten.
 * JetStream's own API and ack subjects, and the private reply inboxes, are
 * added by the permissions code.
 */
export const BUS_ACCESS: readonly SubjectAccess[] = [
  { family: BusPattern.CreateChannel, send: ['gateway'], hear: ['message-service'], request: true },
  { family: BusPattern.PostMessage, send: ['gateway'], hear: ['message-service'], request: true },
  { family: BusPattern.ListMessages, send: ['gateway'], hear: ['message-service'], request: true },
  { family: BusPattern.WaitForReply, send: ['gateway'], hear: ['message-service'], request: true },
  { family: BusPattern.PostAndWait, send: ['gateway'], hear: ['message-service'], request: true },
  { family: BusPattern.ForgetKey, send: ['gateway'], hear: ['message-service'], request: true },
  { family: BusPattern.FindCall, send: ['gateway'], hear: ['message-service'], request: true },
  // The operator's views (the gateway's admin API), never an agent's: every channel of every agent.
  { family: BusPattern.ListCalls, send: ['gateway'], hear: ['message-service'], request: true },
  { family: BusPattern.ListChannels, send: ['gateway'], hear: ['message-service'], request: true },
  { family: BusPattern.ShowChannel, send: ['gateway'], hear: ['message-service'], request: true },
  { family: BusPattern.RegisterAgent, send: ['agent'], hear: ['gateway'], agentToken: 0, request: true },
  { family: BusPattern.StoreReply, send: ['agent'], hear: ['message-service'], agentToken: 0, request: true },
  { family: BusPattern.AgentHistory, send: ['agent'], hear: ['message-service'], agentToken: 0, request: true },
  { family: BusPattern.IsAnswered, send: ['agent'], hear: ['message-service'], agentToken: 0, request: true },
  // Published into JetStream by the message service only; pods read through their consumer, not a subscription.
  { family: AgentInbox.family, send: ['message-service'], hear: [] },
  { family: CallEvents.family, send: ['agent'], hear: ['gateway'], agentToken: 0 },
  { family: CallInput.family, send: ['gateway'], hear: ['agent'], agentToken: 0 },
  { family: AgentCancel.family, send: ['gateway'], hear: ['agent'], agentToken: 0 },
  // Resource updates from the agent itself, at a bounded rate per agent (the gateways' own notices are GatewayNotices).
  { family: AgentNotices.family, send: ['agent'], hear: ['gateway'], agentToken: 0 },
  // Heartbeats of the agent's own pods (`pod_id` in the payload, the agent from the subject); one gateway replica records each.
  { family: AgentPresence.family, send: ['agent'], hear: ['gateway'], agentToken: 0 },
  { family: GatewayNotices.family, send: ['gateway'], hear: ['gateway'] },
  { family: ReplyStored.family, send: ['message-service'], hear: ['message-service'] },
  { family: ReplicaReplies.family, send: ['agent'], hear: ['message-service'], agentToken: 1, request: true },
  { family: CallCancelled.family, send: ['gateway'], hear: ['gateway'] },
  // Only gateways may speak here: a forged count would shift every replica's quota sums.
  { family: QuotaGossip.family, send: ['gateway'], hear: ['gateway'] },
  // Call outcomes and registrations for the live consoles: gateways only, never an agent.
  { family: GatewayActivity.family, send: ['gateway'], hear: ['gateway'] },
];
