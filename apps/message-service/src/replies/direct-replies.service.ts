import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ReplyHeaders } from '@mcpgw/contracts';
import { NATS_CONNECTION, decodeJson, encodeJson, failureFrame } from '@mcpgw/bus';
import type { Msg, NatsConnection, Subscription } from 'nats';
import { MessagesService } from '../messages/messages.service';
import { REPLICA_REPLIES_SUBJECT } from './replica-replies.subject';

/** JetStream's positive acknowledgement. */
const ACK = new TextEncoder().encode('+ACK');

/**
 * Replies to the chat messages this replica delivered, straight from the pods
 * (see apps/agent-pod/src/inbox/README.md). A reply is stored (group-committed with others),
 * the waiter here is woken, and only then is the pod's inbox message acked on
 * its behalf, with the ack subject the pod sent along. Sent as a request (a
 * pod's retry after a redelivery), the reply is answered instead and the pod
 * acks itself.
 */
@Injectable()
export class DirectRepliesService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(DirectRepliesService.name);
  private subscription?: Subscription;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(REPLICA_REPLIES_SUBJECT) private readonly subject: string,
    private readonly messages: MessagesService,
  ) {}

  onModuleInit(): void {
    this.subscription = this.nc.subscribe(this.subject, { callback: (_error, msg) => void this.receive(msg) });
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
  }

  private async receive(msg: Msg): Promise<void> {
    try {
      const stored = await this.messages.postReply(decodeJson(msg.data), msg.data);
      if (msg.reply) return void msg.respond(encodeJson({ ok: true, data: stored }));
      const ack = msg.headers?.get(ReplyHeaders.ack);
      if (ack) this.nc.publish(ack, ACK);
    } catch (error) {
      const frame = failureFrame(error, () => this.logger.error({ msg: 'storing a reply failed', error: (error as Error).message }));
      if (msg.reply) return void msg.respond(encodeJson(frame));
      // Not acked: the message is delivered again and the pod sends its reply once more.
      this.logger.warn({ msg: 'reply not stored; the pod will send it again', error: frame.ok ? undefined : frame.error.message });
    }
  }
}
