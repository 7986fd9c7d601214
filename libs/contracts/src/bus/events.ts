import { defineEvent } from './define';
import { checkCallCancelled, type CallCancelledEvent } from './payload-checks';

/** Fan-out events, relative to the prefix: every replica of the listening app gets a copy. */

/** gateway replicas: a client cancelled a request; the replica running it stops it. */
export const CallCancelled = defineEvent<CallCancelledEvent>('gateway.calls.cancelled', checkCallCancelled);
