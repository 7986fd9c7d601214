import { Inject, Injectable, Logger } from '@nestjs/common';
import { ReplyStored, parseEnvelope, type AgentReply } from '@mcpgw/contracts';
import { BUS_OPTIONS, NATS_CONNECTION, decodeJson, encodeJson, type BusOptions } from '@mcpgw/bus';
import { METRICS_REGISTRY } from '@mcpgw/observability';
import type { NatsConnection } from 'nats';
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
  private readonly logger = new Logger(ReplyNotices.name);
  readonly waiters = new ReplyWaiters();

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_OPTIONS) private readonly bus: BusOptions,
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
  stored(reply: AgentReply, raw?: Uint8Array): void {
    this.waiters.wake(reply);
    this.nc.publish(ReplyStored.subject(this.bus.prefix, reply.in_reply_to), raw ?? encodeJson(reply));
  }

  /**
   * Hear the reply to a message wherever it is stored, until `stop`. Resolves
   * once the server has the subscription, so a reply stored after that is
   * heard: read the database after this, not before.
   */
  async listen(messageId: string): Promise<{ stop(): void }> {
    const subscription = this.nc.subscribe(ReplyStored.subject(this.bus.prefix, messageId), {
      callback: (error, msg) => {
        if (error) return this.logger.warn(`reply notice for ${messageId}: ${error.message}`);
        const parsed = parseEnvelope(decodeJson(msg.data));
        if (parsed.ok && parsed.value.type === 'agent_reply') this.waiters.wake(parsed.value);
      },
    });
    await this.nc.flush();
    return { stop: () => subscription.unsubscribe() };
  }
}
