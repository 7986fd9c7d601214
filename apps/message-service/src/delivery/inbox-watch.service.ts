import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { InboxPublisher, type InboxTampering, type InboxTamperingEvent } from '@mcpgw/bus';

const seen = new Map<InboxTampering, number>();

/** `mcpgw_inbox_tampering_total{kind}`: what the watch saw done to the inbox stream. */
export const inboxTamperingMetric = {
  name: 'mcpgw_inbox_tampering_total',
  help: 'Purges, message or consumer deletes and foreign consumers seen on the agent inbox stream (refused ones too)',
  labelNames: ['kind'] as const,
  read: () => [...seen].map(([kind, value]) => [{ kind }, value] as [{ kind: string }, number]),
};

/**
 * Says so when someone purges the agent inbox stream, deletes its messages or
 * consumers, or makes a consumer that is not an agent's own (libs/bus
 * `watchInboxStream`). The stream denies purges and deletes, and no app's NATS
 * user may ask for them, so any of these means a user with wider JetStream
 * rights than ours (a leaked admin credential, a tool run by mistake): an
 * operator must look. Logged as an error and counted; nothing is undone here.
 */
@Injectable()
export class InboxWatchService implements OnModuleDestroy {
  private readonly logger = new Logger(InboxWatchService.name);
  private stop?: () => void;

  constructor(private readonly inboxes: InboxPublisher) {}

  /** Called once the stream exists (AgentDeliveryService makes it at start). */
  async start(): Promise<void> {
    this.stop ??= await this.inboxes.watch((event) => this.report(event));
  }

  onModuleDestroy(): void {
    this.stop?.();
  }

  private report(event: InboxTamperingEvent): void {
    seen.set(event.kind, (seen.get(event.kind) ?? 0) + 1);
    this.logger.error({ msg: 'agent inbox stream tampered with', ...event });
  }
}
