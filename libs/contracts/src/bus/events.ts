import { defineEvent } from './define';
import {
  checkActivity,
  checkCallCancelled,
  checkQuotaGossip,
  type ActivityEvent,
  type CallCancelledEvent,
  type QuotaGossipEvent,
} from './payload-checks';

/** Fan-out events, relative to the prefix: every replica of the listening app gets a copy. */

/** gateway replicas: a client cancelled a request; the replica running it stops it. */
export const CallCancelled = defineEvent<CallCancelledEvent>('gateway.calls.cancelled', checkCallCancelled);

/**
 * gateway replicas: each replica's live quota counts per principal, about once
 * a second and only while it has any (apps/gateway/src/quotas/README.md).
 */
export const QuotaGossip = defineEvent<QuotaGossipEvent>('gateway.quotas.gossip', checkQuotaGossip);

/**
 * gateway replicas: a call ended, or a pod registered; heard by the replicas
 * whose management API has a live console (`GET /admin/v1/events`) open.
 */
export const GatewayActivity = defineEvent<ActivityEvent>('gateway.activity', checkActivity);
