import { AgentInbox, BUS_ACCESS, subject, type BusRole, type SubjectAccess } from '@mcpgw/contracts';

/** Who a set of NATS credentials is: an app, or the pods of one agent. */
export type BusIdentity = { role: 'gateway' } | { role: 'message-service' } | { role: 'agent'; agentId: string };

/**
 * NATS user permissions: subjects it may publish to and subscribe to. Answers
 * to requests are publishes to the askers' reply inboxes, granted like any
 * other subject (never `allow_responses`).
 */
export interface BusPermissions {
  pub: string[];
  sub: string[];
}

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
  pub.push(...answersFor(prefix, identity));
  sub.push(`${inboxPrefix(prefix, identity)}.>`);
  const stream = AgentInbox.streamName(prefix);
  switch (identity.role) {
    case 'gateway':
      return { pub, sub };
    case 'message-service':
      // Only what it does with the stream: make it, keep its settings, and watch it (inbox-watch.ts).
      // No purge, no delete, no consumer changes: even a service tricked into
      // publishing there is refused by the server.
      pub.push(
        '$JS.API.INFO',
        `$JS.API.STREAM.INFO.${stream}`,
        `$JS.API.STREAM.CREATE.${stream}`,
        `$JS.API.STREAM.UPDATE.${stream}`,
        `$JS.API.CONSUMER.LIST.${stream}`,
        `$JS.API.CONSUMER.INFO.${stream}.*`,
        `$JS.ACK.${stream}.>`,
      );
      sub.push('$JS.EVENT.ADVISORY.API', `$JS.EVENT.ADVISORY.CONSUMER.CREATED.${stream}.*`);
      return { pub, sub };
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

/**
 * The reply inboxes an identity answers to: those of the senders of every
 * request family it hears (`request` in BUS_ACCESS), each as a wildcard over
 * that role's inboxes (`_INBOX.<prefix>.agent.*.>` for agents). No identity
 * gets NATS's `allow_responses`, which would let it answer on whatever reply
 * subject a request names; the services also check each reply subject against
 * the one asker's inbox before answering (reply-inboxes.ts).
 */
function answersFor(prefix: string, identity: BusIdentity): string[] {
  const inboxes = new Set<string>();
  for (const access of BUS_ACCESS) {
    if (!access.request || !access.hear.includes(identity.role)) continue;
    for (const role of access.send) {
      const asker: BusIdentity = role === 'agent' ? { role, agentId: '*' } : ({ role } as BusIdentity);
      inboxes.add(`${inboxPrefix(prefix, asker)}.>`);
    }
  }
  return [...inboxes];
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
