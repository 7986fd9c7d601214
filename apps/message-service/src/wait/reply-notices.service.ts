import { Inject, Injectable } from '@nestjs/common';
import { ReplyStored, type AgentReply } from '@mcpgw/contracts';
import { BusClient, type Encoded } from '@mcpgw/bus';
import { METRICS_REGISTRY } from '@mcpgw/observability';
import { Gauge, type Registry } from 'prom-client';
import { ReplyWaiters } from './reply-waiters';

/**
 * Who waits for which reply on this replica, and how a stored reply reaches
 * them: this replica's waiters are woken in memory; a replica that waits for a
 * message it did not deliver listens on the message's `ReplyStored` subject
 * for as long as it waits. See README.md beside this file.
 */
@Injectable()
export class ReplyNotices {
  readonly waiters = new ReplyWaiters();

  constructor(
    private readonly bus: BusClient,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    const waiters = this.waiters;
    new Gauge({
      name: 'mcpgw_waits_open',
      help: 'messages whose reply this replica is waiting for',
      registers: [registry],
      collect() {
        this.set(waiters.size);
      },
    });
  }

  /** A reply was just stored here. `raw` is its JSON as received, sent on as it is. */
  stored(reply: AgentReply, raw?: Encoded<AgentReply>): void {
    this.waiters.wake(reply);
    this.bus.publish(ReplyStored.at(reply.in_reply_to), raw ?? reply);
  }

  /**
   * Hear the reply to a message wherever it is stored, until `stop`. Resolves
   * once the server has the subscription, so a reply stored after that is
   * heard: read the database after this, not before.
   */
  async listen(messageId: string): Promise<{ stop(): void }> {
    const subscription = this.bus.subscribe(ReplyStored.at(messageId), ({ payload }) => this.waiters.wake(payload));
    await this.bus.flush();
    return { stop: () => subscription.unsubscribe() };
  }
}
