import { Injectable } from '@nestjs/common';
import {
  AGENT_ID_PATTERN,
  InvalidRequestError,
  KeyReusedError,
  NotFoundError,
  parseEnvelope,
  type AgentReply,
  type BusResponse,
  type BusPattern,
  type ChannelView,
  type ChatMessage,
  type InboxMessage,
  type PostingKey,
  type StoredMessage,
} from '@mcpgw/contracts';
import type { CallIds, Encoded } from '@mcpgw/bus';
import type { HoldDeadline } from '@mcpgw/persistence';
import { AgentDeliveryService } from '../delivery/agent-delivery.service';
import { ReplyNotices } from '../wait/reply-notices.service';
import { MessagesStore, type InsertOutcome, type PostedWith } from './messages.store';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_LIST = 1000;

type PostResult = BusResponse<typeof BusPattern.PostMessage>;

/**
 * Channels and messages. A posted chat_message is stored, then handed to its
 * agent; a posted agent_reply is stored, then whoever waits for it is woken,
 * on this replica or another. Storing first means nothing the caller was told
 * about is lost.
 */
@Injectable()
export class MessagesService {
  constructor(
    private readonly store: MessagesStore,
    private readonly delivery: AgentDeliveryService,
    private readonly notices: ReplyNotices,
  ) {}

  createChannel(agentId: unknown): Promise<ChannelView> {
    if (typeof agentId !== 'string' || !AGENT_ID_PATTERN.test(agentId)) {
      throw new InvalidRequestError('agent_id must be 1-64 characters of A-Z a-z 0-9 _ -');
    }
    return this.store.createChannel(agentId);
  }

  /**
   * `sender`: who the bus vouches for (`gateway` on the gateway-only subjects,
   * `rest` for the REST mirror). A reply posted this way is the mirror's or a
   * trusted service's; agents reply only through `postReplyFrom`. `ids`: the
   * call's request and trace ids, from the bus headers. `fingerprint` and
   * `key`: a keyed chat_message's (README.md beside this file).
   */
  async post(
    plain: unknown,
    sender: string,
    ids: CallIds = {},
    fingerprint?: unknown,
    key?: unknown,
  ): Promise<PostResult> {
    const envelope = this.parse(plain);
    if (envelope.type === 'agent_reply') return this.storeReply(envelope, undefined, sender);
    const { existingReply: _, ...posted } = await this.postChatMessage(envelope, 'confirmed', sender, ids, {
      fingerprint: fingerprintOf(fingerprint),
      key: keyOf(key),
    });
    return posted;
  }

  /**
   * Post a chat message for a caller that waits for its reply; for a message
   * posted before (same id), also its reply if one is stored. Used by
   * post-and-wait, which then need not look again. `deadline`: the wait's,
   * which its statements wait for at most while the database is away.
   */
  async postChat(
    plain: unknown,
    ids: CallIds = {},
    fingerprint?: unknown,
    key?: unknown,
    deadline?: HoldDeadline,
  ): Promise<PostResult & { existingReply?: AgentReply }> {
    const envelope = this.parse(plain);
    if (envelope.type !== 'chat_message') throw new InvalidRequestError('expected a chat_message');
    return this.postChatMessage(envelope, 'for_waiter', GATEWAY_SENDER, ids, {
      fingerprint: fingerprintOf(fingerprint),
      key: keyOf(key),
      deadline,
    });
  }

  /** ForgetKey: the posting lets go of its key (README.md, "One key, one posting"). */
  async forgetKey(messageId: unknown): Promise<{ forgotten: boolean }> {
    return { forgotten: await this.store.forgetKey(requireUuid(messageId, 'message_id')) };
  }

  /**
   * Post an agent_reply that agent `sender` sent (the subject it came on names
   * the agent, and only that agent's NATS credentials may publish there). It is
   * stored only when it is that agent's reply on a channel of that agent;
   * anything else is refused with `ForeignReplyError` and never reaches a
   * waiter. `raw` is its JSON as received, passed on to other replicas as it is.
   */
  postReplyFrom(sender: string, reply: AgentReply, raw?: Encoded<AgentReply>): Promise<PostResult> {
    if (reply.agent_id !== sender) {
      throw new ForeignReplyError(`a reply of agent ${reply.agent_id} sent by agent ${sender}`);
    }
    return this.storeReply(reply, raw, agentSender(sender));
  }

  /** A channel's history for agent `sender`: only a channel of its own. */
  async listFor(sender: string, channelId: unknown, limit?: unknown): Promise<StoredMessage[]> {
    const id = requireUuid(channelId, 'channel_id');
    if ((await this.store.channelAgent(id)) !== sender) throw new NotFoundError(`no channel ${id}`);
    return this.list(id, limit);
  }

  /**
   * Whether a reply to message M of one of agent `sender`'s channels is stored.
   * Another agent's channel is not found: an agent learns nothing of others'.
   */
  async isAnsweredFor(sender: string, channelId: unknown, messageId: unknown): Promise<boolean> {
    const channel = requireUuid(channelId, 'channel_id');
    const message = requireUuid(messageId, 'message_id');
    if ((await this.store.channelAgent(channel)) !== sender) throw new NotFoundError(`no channel ${channel}`);
    return (await this.store.findReply(channel, message)).reply !== undefined;
  }

  async list(channelId: unknown, limit: unknown = 100): Promise<StoredMessage[]> {
    const id = requireUuid(channelId, 'channel_id');
    const n = Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > MAX_LIST) {
      throw new InvalidRequestError(`limit must be an integer from 1 to ${MAX_LIST}`);
    }
    const messages = await this.store.list(id, n);
    if (!messages) throw new NotFoundError(`no channel ${id}`);
    return messages;
  }

  private parse(plain: unknown): ChatMessage | AgentReply {
    const parsed = parseEnvelope(plain);
    if (!parsed.ok) throw new InvalidRequestError('invalid envelope', parsed.errors);
    return parsed.value;
  }

  /**
   * `confirmed`: the caller is told "posted" and goes away, so JetStream must
   * have the message first. `for_waiter`: the caller waits for the reply (post
   * and wait), which is confirmation enough.
   */
  private async postChatMessage(
    message: ChatMessage,
    delivery: 'confirmed' | 'for_waiter',
    sender: string,
    { request_id: requestId, trace_id: traceId }: CallIds = {},
    keyed: Pick<PostedWith, 'fingerprint' | 'key' | 'deadline'> = {},
  ): Promise<PostResult & { existingReply?: AgentReply }> {
    const outcome = await this.store.insert(message, { sender, traceId, ...keyed });
    const result = this.accepted(outcome, message);
    const deliver = (stored: InboxMessage) =>
      delivery === 'confirmed'
        ? this.delivery.deliver(stored, requestId)
        : this.delivery.deliverForWaiter(stored, requestId);
    if (!result.duplicate) {
      await deliver({ ...message, channel_id: result.channel_id });
      return result;
    }
    // Posted before. Answered: never deliver again (that could run it twice). Not answered:
    // deliver again, which heals a post whose first delivery failed after the message was
    // stored; JetStream drops the copy within its de-duplication window if the first went out.
    // Joined by its key under another id, the posting delivered again is the stored one.
    const posting = outcome.kind === 'duplicate' ? outcome.posting : undefined;
    const postingId = posting?.id ?? message.id;
    const { reply } = await this.store.findReply(result.channel_id, postingId, keyed.deadline);
    const again = postingId === message.id ? message : posting?.envelope;
    if (!reply && again) await deliver({ ...again, channel_id: result.channel_id });
    return { ...result, existingReply: reply };
  }

  private async storeReply(
    reply: AgentReply,
    raw: Encoded<AgentReply> | undefined,
    sender: string,
  ): Promise<PostResult> {
    const outcome = await this.store.insert(reply, { sender });
    if (outcome.kind === 'already_answered') {
      // At-least-once delivery can make an agent answer twice; the first answer stands.
      return { channel_id: outcome.channelId, seq: outcome.seq, duplicate: true };
    }
    const result = this.accepted(outcome, reply);
    this.notices.stored(reply, raw);
    return result;
  }

  private accepted(outcome: InsertOutcome, envelope: ChatMessage | AgentReply): PostResult {
    switch (outcome.kind) {
      case 'duplicate': {
        const { posting } = outcome;
        return {
          channel_id: outcome.channelId,
          seq: outcome.seq,
          duplicate: true,
          ...(posting && {
            posting: {
              id: posting.id,
              created_at: posting.createdAt,
              ...(posting.callId !== undefined && { call_id: posting.callId }),
            },
          }),
        };
      }
      case 'stored':
      case 'already_answered':
        return { channel_id: outcome.channelId, seq: outcome.seq, duplicate: outcome.kind !== 'stored' };
      case 'reused':
        throw new KeyReusedError(`message ${envelope.id} was posted before with another tool or other arguments`);
      case 'no_channel':
        throw new NotFoundError(`no channel ${envelope.channel_id}`);
      case 'wrong_agent':
        throw new ForeignReplyError(`a reply of agent ${envelope.agent_id} on a channel of another agent`);
      case 'no_message_to_answer':
        throw new NotFoundError(
          `no message ${(envelope as AgentReply).in_reply_to} on channel ${envelope.channel_id} to reply to`,
        );
    }
  }
}

/** Who posted on the gateway-only subjects (post, post-and-wait). */
export const GATEWAY_SENDER = 'gateway';

/** The stamp of an agent's messages. */
export function agentSender(agentId: string): string {
  return `agent:${agentId}`;
}

/**
 * A reply refused because it is not from the channel's agent: sent by another
 * agent's credentials, or naming a channel of another agent. It is dropped and
 * counted (`mcpgw_bus_dropped_total`), never stored, never woken on.
 */
export class ForeignReplyError extends InvalidRequestError {}

export function requireUuid(value: unknown, name: string): string {
  if (typeof value !== 'string' || !UUID.test(value)) throw new InvalidRequestError(`${name} must be a UUID`);
  return value.toLowerCase();
}

/** The longest time to live a key may ask for: 30 days, the longest a conversation is kept. */
const MAX_KEY_TTL_SECONDS = 30 * 24 * 3600;

/** A post's `key` (`PostingKey`), checked: a UUID ref, a whole number of seconds, an optional flag. */
function keyOf(key: unknown): PostingKey | undefined {
  if (key === undefined) return undefined;
  const { ref, ttl_s: ttl, renews } = (key ?? {}) as Record<string, unknown>;
  const valid =
    typeof key === 'object' &&
    key !== null &&
    typeof ref === 'string' &&
    UUID.test(ref) &&
    Number.isInteger(ttl) &&
    (ttl as number) >= 1 &&
    (ttl as number) <= MAX_KEY_TTL_SECONDS &&
    (renews === undefined || typeof renews === 'boolean');
  if (!valid)
    throw new InvalidRequestError(
      `key must be {ref: a UUID, ttl_s: whole seconds from 1 to ${MAX_KEY_TTL_SECONDS}, renews?: boolean}`,
    );
  return { ref: (ref as string).toLowerCase(), ttl_s: ttl as number, ...(renews === true && { renews: true }) };
}

/** A post's `fingerprint`: a SHA-256 as 64 hex digits, or none. */
function fingerprintOf(fingerprint: unknown): string | undefined {
  if (fingerprint === undefined) return undefined;
  if (typeof fingerprint !== 'string' || !/^[0-9a-f]{64}$/.test(fingerprint))
    throw new InvalidRequestError('fingerprint must be a SHA-256 in 64 lower-case hex digits');
  return fingerprint;
}
