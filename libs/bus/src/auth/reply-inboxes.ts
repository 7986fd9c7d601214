import { AGENT_ID_PATTERN, BUS_ACCESS, subject as fullSubject, type SubjectAccess } from '@mcpgw/contracts';
import { subjectOfAnyShape } from '../subject-guard';
import { inboxPrefix, type BusIdentity } from './permissions';

const ACCESS = new Map(BUS_ACCESS.map((access) => [access.family, access]));

/**
 * Where the answer to a request may go: the private reply inboxes of those
 * who may ask on that subject (`_INBOX.<prefix>.<identity>.…`), derived from
 * the bus contract (`BUS_ACCESS`: a family marked `request`, its senders, and
 * the agent its subject names). Empty when the family takes no requests.
 *
 * NATS does not check a reply subject against the requester's permissions, and
 * a service answers with its own: without this, an agent could name
 * `$JS.API.STREAM.PURGE.<stream>` as the reply subject of its registration and
 * have the gateway (or the message service) publish there for it.
 */
export function askerInboxes(prefix: string, family: string, received: string): string[] {
  const access = ACCESS.get(family);
  if (!access?.request) return [];
  return access.send.flatMap((role) => {
    if (role !== 'agent') return [`${inboxPrefix(prefix, { role } as BusIdentity)}.>`];
    const agentId = agentNamedBy(prefix, access, received);
    return agentId ? [`${inboxPrefix(prefix, { role, agentId })}.>`] : [];
  });
}

/** True when `reply` is a reply subject the asker of a request on `received` (of `family`) listens on. */
export function replyAllowed(prefix: string, family: string, received: string, reply: string): boolean {
  return subjectOfAnyShape(reply, askerInboxes(prefix, family, received));
}

/** The agent at the family's `agentToken` wildcard of a received subject, if it names a valid one. */
function agentNamedBy(prefix: string, access: SubjectAccess, received: string): string | undefined {
  const want = fullSubject(prefix, access.family).split('.');
  const got = received.split('.');
  if (access.agentToken === undefined || want.length !== got.length) return undefined;
  let star = -1;
  for (let i = 0; i < want.length; i++) {
    if (want[i] === '*' && ++star === access.agentToken) return AGENT_ID_PATTERN.test(got[i]) ? got[i] : undefined;
    if (want[i] !== '*' && want[i] !== got[i]) return undefined;
  }
  return undefined;
}
