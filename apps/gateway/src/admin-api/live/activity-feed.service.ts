import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { GatewayActivity, type ActivityEvent } from '@mcpgw/contracts';
import { BusClient, type BusSubscription } from '@mcpgw/bus';

type Listener = (event: ActivityEvent) => void;

/**
 * Every gateway replica's activity (`GatewayActivity` on the bus: calls that
 * ended, pods that registered), for the live consoles of this replica. The
 * subscription is held only while a console listens: a gateway nobody watches
 * hears nothing.
 */
@Injectable()
export class ActivityFeed implements OnApplicationShutdown {
  private readonly listeners = new Set<Listener>();
  private subscription?: BusSubscription;

  constructor(private readonly bus: BusClient) {}

  /** Hear every activity event from now on (resolves once the bus has the subscription); call the answer to stop. */
  async listen(listener: Listener): Promise<() => void> {
    this.listeners.add(listener);
    this.subscription ??= this.bus.subscribe(GatewayActivity, ({ payload }) => {
      for (const each of this.listeners) each(payload);
    });
    await this.bus.flush().catch(() => undefined);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size > 0) return;
      this.subscription?.unsubscribe();
      this.subscription = undefined;
    };
  }

  onApplicationShutdown(): void {
    this.listeners.clear();
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }
}
