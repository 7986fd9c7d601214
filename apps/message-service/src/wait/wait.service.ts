import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  InvalidRequestError,
  NotFoundError,
  ReplicaDrainingError,
  callDeadlineOf,
  type AgentReply,
  type BusPattern,
  type BusResponse,
  type ChatMessage,
  type Deadline,
  type WaitResult,
} from '@mcpgw/contracts';
import { BusClient, type CallIds } from '@mcpgw/bus';
import { METRICS_REGISTRY, hopTimer } from '@mcpgw/observability';
import type { Registry } from 'prom-client';
import { Draining } from '@mcpgw/runtime';
import { MESSAGE_SERVICE_ENV, type MessageServiceEnv } from '../config/message-service.env';
import { MessagesService } from '../messages/messages.service';
import { MessagesStore } from '../messages/messages.store';
import { ReplyNotices } from './reply-notices.service';
import { waitDeadline } from './wait-deadline';

/** One wait under way on this replica, so that a drain can give it back. */
interface HeldWait {
  givenBack: boolean;
  giveBack(): void;
}

/** A reply this replica still expects after a drain gave its wait back: the pod answers the replica that delivered. */
interface OwedReply {
  messageId: string;
  stored: Promise<unknown>;
  forget(): void;
}

/**
 * "The message on channel C that answers message M, or a timeout." See README.md
 * beside this file for why it cannot miss a reply and never polls, and what
 * a draining replica does with the waits it holds.
 */
@Injectable()
export class WaitService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(WaitService.name);
  private stopped = false;
  /** Open waits, and the promises that end with them (a drain waits for both). */
  private readonly held = new Set<HeldWait>();
  private readonly running = new Set<Promise<unknown>>();
  private readonly owed = new Set<OwedReply>();
  /** Times hop `message_service` (/metrics): post received to reply in hand. */
  private readonly hop: () => () => void;

  constructor(
    private readonly store: MessagesStore,
    private readonly messages: MessagesService,
    private readonly notices: ReplyNotices,
    private readonly bus: BusClient,
    @Inject(MESSAGE_SERVICE_ENV) private readonly env: MessageServiceEnv,
    private readonly draining: Draining,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.hop = hopTimer(registry, 'message_service');
    draining.register({
      name: 'waits',
      stopIntake: () => this.giveBackAll(),
      settled: () => this.settled(),
      handBack: async () => this.forgetOwed(),
      pending: () => [
        ...(this.held.size ? [`${this.held.size} wait(s) open`] : []),
        ...(this.owed.size ? [`replies to ${this.owed.size} delivered message(s) not stored yet`] : []),
      ],
    });
  }

  onModuleInit(): void {
    void this.recheckAfterReconnects();
  }

  onModuleDestroy(): void {
    this.stopped = true;
  }

  /**
   * The reply to a message already posted, or a timeout. The message may have
   * been delivered by another replica, whose pod answers there: listen for its
   * notice first, then look.
   */
  waitForReply(channelId: string, messageId: string, timeoutMs: unknown): Promise<WaitResult> {
    const deadline = waitDeadline(timeoutMs, this.env.WAIT_MAX_MS);
    return this.awaitReply(messageId, deadline, async (listen) => {
      await listen();
      const stored = await this.store.findReply(channelId, messageId, deadline);
      if (!stored.messageExists) throw new NotFoundError(`no message ${messageId} on channel ${channelId}`);
      return { channelId, reply: stored.reply };
    });
  }

  /**
   * Post a chat message and wait for its reply in one round trip: the waiter is
   * registered before the message is delivered, so a fresh message needs no
   * database read at all, and its pod answers this replica directly. A
   * re-posted message may have its reply already; if not, its first posting
   * may be on another replica, so listen for the reply's notice, then look once more.
   */
  async postAndWait(
    envelope: unknown,
    timeoutMs: unknown,
    ids: CallIds = {},
    fingerprint?: unknown,
    key?: unknown,
  ): Promise<BusResponse<typeof BusPattern.PostAndWait>> {
    const hopDone = this.hop();
    const messageId = (envelope as { id?: unknown } | null)?.id;
    if (typeof messageId !== 'string' || (envelope as { type?: unknown }).type !== 'chat_message') {
      throw new InvalidRequestError('post_and_wait takes a chat_message with an id');
    }
    // Bounded by the agent's own budget too: the message is checked before it is stored, just below.
    const deadline = waitDeadline(timeoutMs, this.env.WAIT_MAX_MS, envelope as Pick<ChatMessage, 'meta'>);
    let posted!: BusResponse<typeof BusPattern.PostMessage>;
    const waited = await this.awaitReply(messageId, deadline, async (listen) => {
      const { existingReply, ...rest } = await this.messages.postChat(envelope, ids, fingerprint, key, deadline);
      posted = rest;
      // Joined by its key, a posting of another id, not answered yet: wait for that one instead.
      if (posted.posting && posted.posting.id !== messageId.toLowerCase() && !existingReply)
        throw new JoinedAnotherPosting(posted.posting.id);
      if (!posted.duplicate || existingReply) {
        // Delivered from here: its pod answers this replica, which a drain must wait for.
        const delivered = posted.duplicate ? undefined : (callDeadlineOf(envelope as ChatMessage) ?? deadline);
        return { channelId: posted.channel_id, reply: existingReply, delivered };
      }
      await listen();
      const stored = await this.store.findReply(posted.channel_id, messageId, deadline);
      return { channelId: posted.channel_id, reply: stored.reply };
    }).catch((error: unknown) => {
      if (error instanceof JoinedAnotherPosting) return error;
      throw error;
    });
    const result =
      waited instanceof JoinedAnotherPosting
        ? await this.waitForReply(posted.channel_id, waited.postingId, deadline.remainingMs())
        : waited;
    if (result.status === 'replied') hopDone();
    // The call's ids, passed (the bus header and traceparent): no async context carries them here.
    this.logger.debug({ msg: 'post and wait done', message_id: messageId, status: result.status, ...ids });
    return { ...posted, result };
  }

  /**
   * The one way to wait: register, do `first` (which may already find the
   * reply, and may `listen` for a reply stored on another replica), then sleep
   * until a wake-up or the deadline (from `waitDeadline`; one timer);
   * at the deadline, one last read covers a wake-up lost on the bus. One read, not a poll.
   * While the database is away, its statements wait for it until this deadline at most
   * (DatabaseHold: `first` passes it to the store too), then the wait answers `unavailable`
   * (`database_unavailable`).
   */
  private awaitReply(
    messageId: string,
    deadline: Deadline,
    first: (listen: () => Promise<void>) => Promise<{ channelId: string; reply?: AgentReply; delivered?: Deadline }>,
  ): Promise<WaitResult> {
    const waiting = this.sleepUntilReply(messageId, deadline, first);
    this.running.add(waiting);
    void waiting.catch(() => undefined).finally(() => this.running.delete(waiting));
    return waiting;
  }

  private async sleepUntilReply(
    messageId: string,
    deadline: Deadline,
    first: (listen: () => Promise<void>) => Promise<{ channelId: string; reply?: AgentReply; delivered?: Deadline }>,
  ): Promise<WaitResult> {
    const wait = this.notices.waiters.register(messageId);
    const timer = setTimeout(wait.cancel, deadline.remainingMs());
    const held: HeldWait = {
      givenBack: this.draining.active,
      giveBack: () => ((held.givenBack = true), wait.cancel()),
    };
    this.held.add(held);
    let listening: { stop(): void } | undefined;
    const listen = async () => void (listening ??= await this.notices.listen(messageId));
    try {
      const { channelId, reply: early, delivered } = await first(listen);
      wait.onChannel(channelId);
      const reply = early ?? (held.givenBack ? undefined : await wait.reply);
      if (reply) return { status: 'replied', reply };
      if (held.givenBack) {
        if (delivered) this.owe(messageId, channelId, delivered);
        throw new ReplicaDrainingError('this message service replica is shutting down: wait again');
      }
      const late = await this.store.findReply(channelId, messageId, deadline);
      return late.reply ? { status: 'replied', reply: late.reply } : { status: 'timeout' };
    } finally {
      clearTimeout(timer);
      wait.cancel();
      listening?.stop();
      this.held.delete(held);
    }
  }

  /**
   * Drain, step 1: answer every open wait "unavailable" (ReplicaDrainingError) at
   * once, so the gateway asks another replica now rather than after a slice.
   */
  private giveBackAll(): void {
    for (const held of this.held) held.giveBack();
  }

  /**
   * A message this replica delivered was given back unanswered: its pod still
   * sends the reply here, straight (see the pod's inbox/README.md). Stored
   * here, it reaches the other replica's waiter as a notice; so the drain waits
   * for it, until the message's own deadline at the latest.
   */
  private owe(messageId: string, channelId: string, until: Deadline): void {
    const wait = this.notices.waiters.register(messageId, channelId);
    const timer = setTimeout(wait.cancel, until.remainingMs());
    const owed: OwedReply = { messageId, stored: wait.reply, forget: wait.cancel };
    this.owed.add(owed);
    void wait.reply.finally(() => (clearTimeout(timer), this.owed.delete(owed)));
  }

  /** Drain, step 3: the waits are answered and the replies owed are stored (or out of time). */
  private async settled(): Promise<void> {
    await Promise.allSettled([...this.running]);
    await Promise.all([...this.owed].map((owed) => owed.stored));
  }

  /**
   * Past the grace: stop waiting for owed replies. Nothing is lost: unacked,
   * their messages are delivered again and the pod stores its reply at any replica.
   */
  private forgetOwed(): void {
    for (const owed of this.owed) owed.forget();
  }

  /** Wake-ups sent while this replica was cut off from NATS are lost: look in the database once. */
  private async recheckAfterReconnects(): Promise<void> {
    for await (const _ of this.bus.reconnects()) {
      if (this.stopped) return;
      const pending = this.notices.waiters.pending();
      this.logger.warn(`bus reconnected: rechecking ${pending.length} open waits`);
      for (const { channelId, messageId } of pending) {
        const stored = await this.store.findReply(channelId, messageId).catch(() => undefined);
        if (stored?.reply) this.notices.waiters.wake(stored.reply);
      }
    }
  }
}

/** Thrown out of a post-and-wait's first step: the post joined, by its key, a posting of another id. */
class JoinedAnotherPosting {
  constructor(readonly postingId: string) {}
}
