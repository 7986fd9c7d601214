import { busTotal, type CallCounters } from '@mcpgw/devstack';
import { AgentPresence, GatewayActivity, QuotaGossip } from '@mcpgw/contracts';

/**
 * What one tools/call may cost, counted by the apps themselves (/metrics):
 * held by call-budget.e2e.spec.ts with tracing off, and by tracing.e2e.spec.ts
 * with it on (a trace adds headers, not messages).
 */
export const CALL_BUDGET = {
  /**
   * Messages the apps publish per call: the gateway's request, the inbox
   * publish, the pod's reply, the ack, the reply-stored notice, the answer,
   * and the replica's word to the pod that its reply is stored (without it a
   * reply lost with a NATS server went unseen until the ack wait, and another
   * pod ran the call again).
   */
  published: 7,
  /**
   * Messages the apps are delivered per call: the request, the inbox message,
   * the reply, the answer, the pod's word that its reply is stored.
   */
  delivered: 5,
  sqlStatements: 2,
  sqlCommits: 2,
} as const;

/**
 * Not per call: the pods' pulls, JetStream API calls, the quota gossip (one
 * message per busy gateway per QUOTA_GOSSIP_INTERVAL_MS, however many calls)
 * and the live consoles' activity (the calls that ended, one message per busy
 * gateway per second), each held by its own assertion in call-budget.e2e. And
 * the pods' presence heartbeats (one per pod per PRESENCE_INTERVAL_MS, written
 * by the gateways in one statement per 2 s).
 */
export const BACKGROUND = ['js.pull', 'js.api', QuotaGossip.family, GatewayActivity.family, AgentPresence.family];

/**
 * The messages the calls themselves cost in one direction: every family but
 * the background ones. JetStream API requests are background, and so are their
 * answers, which arrive on an `_INBOX` subject like the calls' replies (one per
 * request), so they are taken off what was delivered.
 */
export function callTraffic(spent: CallCounters, direction: 'out' | 'in'): number {
  const total = busTotal(spent, direction, BACKGROUND);
  return direction === 'in' ? total - (spent.bus.get('out js.api') ?? 0) : total;
}
