import type { Provider } from '@nestjs/common';
import { ReplicaReplies } from '@mcpgw/contracts';
import { BUS_OPTIONS, type BusOptions } from '@mcpgw/bus';
import { randomBytes } from 'node:crypto';

/** This replica's replies subject (a random id per process): it travels with every message it delivers. */
export const REPLICA_REPLIES_SUBJECT = Symbol('REPLICA_REPLIES_SUBJECT');

export const replicaRepliesSubject: Provider = {
  provide: REPLICA_REPLIES_SUBJECT,
  inject: [BUS_OPTIONS],
  useFactory: (bus: BusOptions) => ReplicaReplies.subject(bus.prefix, randomBytes(8).toString('hex')),
};
