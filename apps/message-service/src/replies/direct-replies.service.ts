import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ReplicaReplies, ReplyHeaders, type AgentReply, type BusPattern, type BusResponse } from '@mcpgw/contracts';
import {
  BusClient,
  InboxPublisher,
  ackSubjectShape,
  failureFrame,
  refuseOnBus,
  subjectOfShape,
  type BusSubscription,
  type Received,
} from '@mcpgw/bus';
import { ForeignReplyError, MessagesService } from '../messages/messages.service';
import { REPLICA_REPLIES_SUBJECT, type ReplicaRepliesSubjects } from './replica-replies.subject';

/**
 * Replies to the chat messages this replica delivered, straight from the pods
 * (see libs/agent-sdk/src/inbox/README.md), checked by the bus as they arrive.
 * A reply is stored (group-committed with others), the waiter here is woken,
 * and only then is the pod's inbox message acked on its behalf, with the ack
 * subject the pod sent along. Sent as a request (a pod's retry after a
 * redelivery), the reply is answered instead and the pod acks itself.
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
      const stored = await this.messages.postReplyFrom(sender, received.payload, received.raw);
      if (respond) return respond({ ok: true, data: stored });
      if (ack) this.inboxes.ackFor(ack);
    } catch (error) {
      if (error instanceof ForeignReplyError) {
        refuseOnBus(ReplicaReplies.family, 'reply from another agent', error.message);
        return respond?.({ ok: false, error: { code: 'invalid_request', message: error.message } });
      }
      const frame = failureFrame(error, () =>
        this.logger.error({ msg: 'storing a reply failed', error: (error as Error).message }),
      );
      if (respond) return respond(frame);
      // Not acked: the message is delivered again and the pod sends its reply once more.
      this.logger.warn({
        msg: 'reply not stored; the pod will send it again',
        error: frame.ok ? undefined : frame.error.message,
      });
    }
  }
}
