/*
 * The bus without Nest: what an agent needs (the agent SDK imports
 * `@mcpgw/bus/core`) and what the apps build on. `index.ts` adds the Nest
 * module, the microservice transport and the NATS authority (nkeys, JWTs).
 */
export * from './bus-options';
export * from './bus-log';
export * from './connect';
export * from './servers';
export * from './bus-client';
export * from './json';
export * from './jetstream/agent-inbox';
export * from './jetstream/inbox-reader';
export * from './bus-edge';
export * from './bus-meter';
export * from './retry';
export * from './subject-guard';
export * from './connection-status';
export { callIdsOf, type CallIds } from './bus-tracing';
export * from './auth/permissions';
export * from './auth/reply-inboxes';
export * from './auth/creds-file';
export type { NatsConnection } from 'nats';
