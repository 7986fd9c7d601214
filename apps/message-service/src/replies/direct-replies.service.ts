import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  ReplicaReplies,
  ReplyHeaders,
  isRetryable,
  type AgentReply,
  type BusPattern,
  type BusResponse,
} from '@mcpgw/contracts';
import {
  BusClient,
  InboxPublisher,
  ackSubjectShape,
  failureFrame,
  refuseOnBus,
  retry,
  subjectOfShape,
  type BusSubscription,
  type Received,
} from '@mcpgw/bus';
import { ForeignReplyError, MessagesService } from '../messages/messages.service';
import { REPLICA_REPLIES_SUBJECT, type ReplicaRepliesSubjects } from './replica-replies.subject';

/** Backoff between tries to store a held reply; each wait is also when the message is held again (`+WPI`). */
const HOLD_FIRST_RETRY_MS = 200;
const HOLD_MAX_RETRY_MS = 1_000;
/** How long a reply is held at most, and how many at once: past either, the message is left to be delivered again. */
const HOLD_MAX_MS = 120_000;
const HOLD_MAX_REPLIES = 1_000;

/**
 * Replies to the chat messages this replica delivered, straight from the pods
 * (see libs/agent-sdk/src/inbox/README.md), checked by the bus as they arrive.
 * A reply is stored (group-committed with others), the waiter here is woken,
 * and only then is the pod's inbox message acked on its behalf, with the ack
 * subject the pod sent along; while the database is away the message is held
 * (`+WPI`) and the store retried, so that no other pod gets it (`storeHolding`).
 * Sent as a request with that subject (a first delivery's reply), it is
 * answered after the ack, so the pod knows its reply arrived; sent as a
 * request without it (a pod's retry after a redelivery), it is answered once
 * stored and the pod acks itself. Published with it (an agent that wants no
 * answer), it is only acked.
 *
 * Verified envelopes: the subject's last token is the sending agent (only its
 * NATS credentials may publish there); the reply is stored only when it is
 * that agent's, on a channel of that agent, and the ack subject it sends must
 * be exactly the shape of that agent's consumer's (`ackSubjectShape`: no
 * space, no extra token, no wildcard). Anything else is dropped and counted
 * (`mcpgw_bus_dropped_total`), and never reaches a waiter.
 */
@Injectable()
export class DirectRepliesService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(DirectRepliesService.name);
  private subscription?: BusSubscription;
  /** Replies held while the database is away (`hold`), and the signal that ends the holding at shutdown. */
  private held = 0;
  private readonly stopHolding = new AbortController();

  constructor(
    private readonly bus: BusClient,
    private readonly inboxes: InboxPublisher,
    @Inject(REPLICA_REPLIES_SUBJECT) private readonly subjects: ReplicaRepliesSubjects,
    private readonly messages: MessagesService,
  ) {}

  onModuleInit(): void {
    // Essential: without it the pods' replies to this replica go nowhere (`nats` on /ready).
    this.subscription = this.bus.subscribe(
      ReplicaReplies.exact(this.subjects.all),
      (received) => void this.receive(received),
      { essential: true },
    );
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
    this.stopHolding.abort();
  }

  private async receive(received: Received<AgentReply, BusResponse<typeof BusPattern.PostMessage>>): Promise<void> {
    const { respond } = received;
    const sender = this.subjects.agentOf(received.subject);
    try {
      if (!sender) throw new ForeignReplyError(`a reply on ${received.subject}, which names no agent`);
      const ack = received.header(ReplyHeaders.ack);
      if (ack !== undefined && !subjectOfShape(ack, ackSubjectShape(this.bus.prefix, sender))) {
        throw new ForeignReplyError(`agent ${sender} sent an ack subject that is not one of its own consumer's`);
      }
      const store = () => this.messages.postReplyFrom(sender, received.payload, received.raw);
      // Without the pod's ack subject the pod acks itself: a request is answered once stored.
      if (ack === undefined) {
        const data = await store();
        return respond?.({ ok: true, data });
      }
      // With it, the message is held until the reply is stored, acked for the pod, and then a request is answered.
      const data = await this.storeHolding(store, ack);
      this.inboxes.ackFor(ack);
      respond?.({ ok: true, data });
    } catch (error) {
      if (error instanceof ForeignReplyError) {
        refuseOnBus(ReplicaReplies.family, 'reply from another agent', error.message);
        return respond?.({ ok: false, error: { code: 'invalid_request', message: error.message } });
      }
      const frame = failureFrame(error, () =>
        this.logger.error({ msg: 'storing a reply failed', error: (error as Error).message }),
      );
      if (respond) return respond(frame);
      // Not acked: the message is delivered again, to any pod (one that did not answer it runs it again).
      this.logger.warn({
        msg: 'reply not stored; the message will be delivered again',
        error: frame.ok ? undefined : frame.error.message,
      });
    }
  }

  /**
   * Store a reply sent straight from a pod, holding its inbox message while the
   * store fails in a way worth retrying (the database restarting): `+WPI` on
   * its ack subject before each wait, so JetStream does not deliver it again
   * meanwhile. A redelivery could go to another pod, which has not run the
   * skill and would run it again; only the pod that ran it remembers the reply.
   * Bounded: HOLD_MAX_REPLIES at once, HOLD_MAX_MS each, and not past this
   * replica's shutdown; then the last error is thrown and the message is left
   * to be delivered again, as before.
   */
  private async storeHolding<T>(store: () => Promise<T>, ack: string): Promise<T> {
    try {
      return await store();
    } catch (error) {
      if (!isRetryable(error) || this.held >= HOLD_MAX_REPLIES || this.stopHolding.signal.aborted) throw error;
      this.inboxes.workingFor(ack);
      this.logger.warn({ msg: 'reply not stored yet; holding its message', error: `${error}` });
    }
    // Only now the bounds' timer: a reply stored at once (every reply, normally) costs none.
    this.held++;
    try {
      return await retry(store, {
        firstDelayMs: HOLD_FIRST_RETRY_MS,
        maxDelayMs: HOLD_MAX_RETRY_MS,
        signal: AbortSignal.any([this.stopHolding.signal, AbortSignal.timeout(HOLD_MAX_MS)]),
        retryIf: isRetryable,
        onRetry: () => this.inboxes.workingFor(ack),
      });
    } finally {
      this.held--;
    }
  }
}
