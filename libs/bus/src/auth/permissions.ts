import { AgentInbox, BUS_ACCESS, subject, type BusRole, type SubjectAccess } from '@mcpgw/contracts';

/** Who a set of NATS credentials is: an app, or the pods of one agent. */
export type BusIdentity = { role: 'gateway' } | { role: 'message-service' } | { role: 'agent'; agentId: string };

/** NATS user permissions: subjects it may publish to and subscribe to, and whether it may answer requests. */
export interface BusPermissions {
  pub: string[];
  sub: string[];
  /** It answers requests: it may publish once to the reply subject of each request it received, for `ttlMs`. */
  resp?: { max: number; ttlMs: number };
}

/** The longest a service may take to answer a request (post-and-wait waits up to WAIT_MAX_MS). */
const RESPONSE_TTL_MS = 3_600_000;

/** The identity's name: in its user JWT and its inbox prefix. */
export function identityName(identity: BusIdentity): string {
  return identity.role === 'agent' ? `agent.${identity.agentId}` : identity.role;
}

/**
 * The private prefix of the identity's reply inboxes: only it may subscribe
 * there, so nobody else hears the answers to its requests (nats.js
 * `inboxPrefix`; the bus reads it from the credentials, see bus.module.ts).
 */
export function inboxPrefix(prefix: string, identity: BusIdentity): string {
  return `_INBOX.${prefix}.${identityName(identity)}`;
}

/**
 * The permissions of an identity, derived from the bus contract (`BUS_ACCESS`
 * in libs/contracts/src/bus/access.ts) under one prefix, plus the JetStream
 * subjects its job needs: the message service manages the stream and the
 * consumers and acks for pods; an agent's pods may only look up, make (with its
 * own filter), pull from and ack their own durable consumer.
 */
export function permissionsFor(prefix: string, identity: BusIdentity): BusPermissions {
  const pub = BUS_ACCESS.flatMap((access) => subjectsFor(prefix, identity, access, access.send));
  const sub = BUS_ACCESS.flatMap((access) => subjectsFor(prefix, identity, access, access.hear));
  sub.push(`${inboxPrefix(prefix, identity)}.>`);
  const stream = AgentInbox.streamName(prefix);
  switch (identity.role) {
    case 'gateway':
      return { pub, sub, resp: { max: 1, ttlMs: RESPONSE_TTL_MS } };
    case 'message-service':
      pub.push('$JS.API.>', `$JS.ACK.${stream}.>`);
      return { pub, sub, resp: { max: 1, ttlMs: RESPONSE_TTL_MS } };
    case 'agent': {
      const consumer = AgentInbox.consumerName(identity.agentId);
      pub.push(
        '$JS.API.INFO',
        `$JS.API.CONSUMER.INFO.${stream}.${consumer}`,
        `$JS.API.CONSUMER.CREATE.${stream}.${consumer}.${AgentInbox.subject(prefix, identity.agentId)}`,
        `$JS.API.CONSUMER.MSG.NEXT.${stream}.${consumer}`,
        `$JS.ACK.${stream}.${consumer}.>`,
      );
      return { pub, sub };
    }
  }
}

/** The subjects of one family this identity may use, if its role is among `roles`. */
function subjectsFor(
  prefix: string,
  identity: BusIdentity,
  access: SubjectAccess,
  roles: readonly BusRole[],
): string[] {
  if (!roles.includes(identity.role)) return [];
  const full = subject(prefix, access.family);
  if (identity.role !== 'agent') return [full];
  if (access.agentToken === undefined) {
    throw new Error(`${access.family}: an agent may use it, but no token names the agent`);
  }
  let star = -1;
  return [
    full
      .split('.')
      .map((token) => (token === '*' && ++star === access.agentToken ? identity.agentId : token))
      .join('.'),
  ];
}
