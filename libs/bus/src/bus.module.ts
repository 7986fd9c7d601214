import { Inject, Logger, Module, type DynamicModule, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import type { NatsConnection } from 'nats';
import { BusClient } from './bus-client';
import { InboxPublisher } from './jetstream/inbox-publisher';
import { InboxReader } from './jetstream/inbox-reader';
import { BUS_OPTIONS, NATS_CONNECTION, type BusOptions } from './bus-options';
import { setBusLog } from './bus-log';
import { connectBus } from './connect';

export interface BusModuleAsyncOptions {
  imports?: DynamicModule['imports'];
  inject?: unknown[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Nest's factory providers receive whatever `inject` lists
  useFactory: (...args: any[]) => BusOptions | Promise<BusOptions>;
}

// libs/bus logs through Nest's logger in the apps.
setBusLog(new Logger('Bus'));

class BusLifecycle implements OnApplicationShutdown {
  constructor(@Inject(NATS_CONNECTION) private readonly nc: NatsConnection) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.drain().catch(() => this.nc.close());
  }
}

/** One NATS connection per app, the typed client and inbox ends, and a clean drain on shutdown. */
@Module({})
export class BusModule {
  static forRootAsync(options: BusModuleAsyncOptions): DynamicModule {
    const optionsProvider: Provider = {
      provide: BUS_OPTIONS,
      useFactory: options.useFactory,
      inject: (options.inject ?? []) as never[],
    };
    const connectionProvider: Provider = {
      provide: NATS_CONNECTION,
      useFactory: connectBus,
      inject: [BUS_OPTIONS],
    };
    return {
      module: BusModule,
      global: true,
      imports: options.imports,
      providers: [
        optionsProvider,
        connectionProvider,
        // Plain classes (the agent SDK uses them without Nest), made here from the connection and options.
        { provide: BusClient, useFactory: plain(BusClient), inject: [NATS_CONNECTION, BUS_OPTIONS] },
        { provide: InboxReader, useFactory: plain(InboxReader), inject: [NATS_CONNECTION, BUS_OPTIONS] },
        InboxPublisher,
        BusLifecycle,
      ],
      exports: [BUS_OPTIONS, NATS_CONNECTION, BusClient, InboxPublisher, InboxReader],
    };
  }
}

function plain<T>(type: new (nc: NatsConnection, options: BusOptions) => T) {
  return (nc: NatsConnection, options: BusOptions) => new type(nc, options);
}
