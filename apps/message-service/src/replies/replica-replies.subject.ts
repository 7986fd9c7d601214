import type { Provider } from '@nestjs/common';
import { ReplicaReplies } from '@mcpgw/contracts';
import { BUS_OPTIONS, type BusOptions } from '@mcpgw/bus';
import { randomBytes } from 'node:crypto';

/**
 * This replica's replies subjects (a random id per process), one per agent:
 * the one of a message's agent travels with the message, and only that
 * agent's NATS credentials may publish there.
 */
export interface ReplicaRepliesSubjects {
  /** Where agent `agentId` replies to messages this replica delivered. */
  forAgent(agentId: string): string;
  /** All of them, to subscribe to. */
  readonly all: string;
  /** The agent a received replies subject names (its last token). */
  agentOf(subject: string): string | undefined;
}

export const REPLICA_REPLIES_SUBJECT = Symbol('REPLICA_REPLIES_SUBJECT');

export const replicaRepliesSubject: Provider = {
  provide: REPLICA_REPLIES_SUBJECT,
  inject: [BUS_OPTIONS],
  useFactory: (bus: BusOptions): ReplicaRepliesSubjects => {
    const replica = randomBytes(8).toString('hex');
    const all = ReplicaReplies.subject(bus.prefix, replica, '*');
    const stem = all.slice(0, -1);
    return {
      forAgent: (agentId) => ReplicaReplies.subject(bus.prefix, replica, agentId),
      all,
      agentOf: (subject) => (subject.startsWith(stem) ? subject.slice(stem.length) || undefined : undefined),
    };
  },
};
