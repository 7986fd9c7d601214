import { CallEvents, InputRequestEvent, LogEvent, ProgressEvent, parseAs, type CallEvent } from '@mcpgw/contracts';
import { decodeJson } from '@mcpgw/bus';
import type { NatsConnection, Subscription } from 'nats';

/**
 * Watches one message in flight: the agent's progress and log events (core
 * NATS), and when the agent last showed a sign of life. Start it before the
 * message is posted, stop it when the call ends.
 */
export class CallWatch {
  private readonly subscription: Subscription;
  private lastActivity = Date.now();

  constructor(nc: NatsConnection, prefix: string, messageId: string, onEvent: (event: CallEvent) => void) {
    this.subscription = nc.subscribe(CallEvents.subject(prefix, messageId), {
      callback: (err, msg) => {
        if (err) return;
        const plain = decodeJson(msg.data) as { type?: unknown } | undefined;
        const parsed =
          plain?.type === 'progress'
            ? parseAs(ProgressEvent, plain)
            : plain?.type === 'input_request'
              ? parseAs(InputRequestEvent, plain)
              : parseAs(LogEvent, plain);
        if (!parsed.ok || parsed.value.in_reply_to !== messageId) return;
        this.lastActivity = Date.now();
        onEvent(parsed.value);
      },
    });
  }

  /** Milliseconds since the last event (or since the watch began). */
  get idleMs(): number {
    return Date.now() - this.lastActivity;
  }

  stop(): void {
    this.subscription.unsubscribe();
  }
}
