import { AgentInbox } from '@mcpgw/contracts';
import type { NatsConnection, Subscription } from 'nats';
import { decodeJson } from '../json';

/** What the inbox watch saw done to the stream, by whom it could not tell. */
export type InboxTampering =
  'purge' | 'message_delete' | 'stream_delete' | 'consumer_delete' | 'foreign_consumer' | 'config_change';

export interface InboxTamperingEvent {
  kind: InboxTampering;
  /** The JetStream API subject, or the consumer's name. */
  subject: string;
  /** Whether JetStream refused it (a purge or a message delete on a stream that denies them). */
  refused: boolean;
  /** The NATS user and connection name that asked, when the advisory says. */
  user?: string;
  client?: string;
}

/** The JetStream API calls against the inbox stream that nobody of ours makes, by subject. */
function tamperingOf(api: string, stream: string): InboxTampering | undefined {
  if (api === `$JS.API.STREAM.PURGE.${stream}`) return 'purge';
  if (api === `$JS.API.STREAM.MSG.DELETE.${stream}`) return 'message_delete';
  if (api === `$JS.API.STREAM.DELETE.${stream}`) return 'stream_delete';
  if (api.startsWith(`$JS.API.CONSUMER.DELETE.${stream}.`)) return 'consumer_delete';
  return undefined;
}

/**
 * A consumer of the inbox stream is ours when it is the durable of one agent
 * (`agent_<id>`) and reads only that agent's inbox subject. Pods can make only
 * that one (their permissions name the exact CREATE subject); anything else was
 * made by a user with wider JetStream rights, and can read or ack agents' calls.
 */
export function isAgentConsumer(prefix: string, name: string, filterSubject: string | undefined): boolean {
  const match = /^agent_([A-Za-z0-9_-]+)$/.exec(name);
  return !!match && filterSubject === AgentInbox.subject(prefix, match[1]);
}

/**
 * Watch the inbox stream for what must not happen to it, and say so: the
 * account's JetStream API audit advisories (`$JS.EVENT.ADVISORY.API`: every API
 * call, refused ones included) for purges, message and consumer deletes, the
 * consumer-created advisories for consumers that are not an agent's own, and,
 * at start, the consumers already there. `onTampering` is called for each.
 * Returns a stop function.
 */
export async function watchInboxStream(
  nc: NatsConnection,
  prefix: string,
  onTampering: (event: InboxTamperingEvent) => void,
): Promise<() => void> {
  const stream = AgentInbox.streamName(prefix);
  const jsm = await nc.jetstreamManager();
  const checkConsumer = async (name: string) => {
    const info = await jsm.consumers.info(stream, name).catch(() => undefined);
    if (info && !isAgentConsumer(prefix, name, info.config.filter_subject)) {
      onTampering({ kind: 'foreign_consumer', subject: name, refused: false });
    }
  };
  const subscriptions: Subscription[] = [
    nc.subscribe('$JS.EVENT.ADVISORY.API', {
      callback: (error, msg) => {
        if (error) return;
        const audit = decodeJson(msg.data) as ApiAudit | undefined;
        const kind = typeof audit?.subject === 'string' ? tamperingOf(audit.subject, stream) : undefined;
        if (!audit || !kind) return;
        onTampering({
          kind,
          subject: audit.subject!,
          refused: typeof audit.response === 'string' && audit.response.includes('"error"'),
          user: audit.client?.user,
          client: audit.client?.name,
        });
      },
    }),
    nc.subscribe(`$JS.EVENT.ADVISORY.CONSUMER.CREATED.${stream}.*`, {
      callback: (error, msg) => {
        if (!error) void checkConsumer(msg.subject.slice(msg.subject.lastIndexOf('.') + 1));
      },
    }),
  ];
  for await (const info of jsm.consumers.list(stream)) {
    if (!isAgentConsumer(prefix, info.name, info.config.filter_subject)) {
      onTampering({ kind: 'foreign_consumer', subject: info.name, refused: false });
    }
  }
  return () => subscriptions.forEach((sub) => sub.unsubscribe());
}

/** The parts of an `io.nats.jetstream.advisory.v1.api_audit` advisory read here. */
interface ApiAudit {
  subject?: string;
  response?: unknown;
  client?: { user?: string; name?: string };
}
