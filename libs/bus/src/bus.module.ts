import { Inject, Logger, Module, type DynamicModule, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { connect, credsAuthenticator, type Authenticator, type NatsConnection } from 'nats';
import { readFileSync } from 'node:fs';
import { BusClient } from './bus-client';
import { InboxPublisher } from './jetstream/inbox-publisher';
import { InboxReader } from './jetstream/inbox-reader';
import { meterConnection } from './bus-meter';
import { connectionEvents } from './connection-status';
import { coalesceWrites } from './write-coalescing';
import { BUS_OPTIONS, NATS_CONNECTION, type BusOptions } from './bus-options';
import { credsClaims } from './auth/authority';
import { inboxPrefix } from './auth/permissions';

export interface BusModuleAsyncOptions {
  imports?: DynamicModule['imports'];
  inject?: unknown[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Nest's factory providers receive whatever `inject` lists
  useFactory: (...args: any[]) => BusOptions | Promise<BusOptions>;
}

const logger = new Logger('Bus');

async function connectNats(options: BusOptions): Promise<NatsConnection> {
  const inbox = inboxPrefix(options.prefix, options.identity);
  const authenticator = options.credsFile ? credentialsFrom(options.credsFile, inbox) : undefined;
  const nc = await connect({
    servers: options.url.split(','),
    name: options.name,
    authenticator,
    inboxPrefix: inbox,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    // No stack capture per request: it costs on every call and only helps debugging.
    noAsyncTraces: true,
  });
  meterConnection(nc, options.prefix);
  coalesceWrites(nc);
  // Counted for /metrics, followed for /ready (connection-status.ts), and logged.
  connectionEvents(nc, (type, data) => logger.warn(`nats ${type} (${String(data)})`));
  void (async () => {
    for await (const status of nc.status()) {
      // The server refused a publish or a subscription: these credentials lack a permission.
      const denied = (status as { permissionContext?: { operation: string; subject: string } }).permissionContext;
      if (status.type === 'error' && denied) {
        logger.error({ msg: 'nats permissions violation', operation: denied.operation, subject: denied.subject });
      }
    }
  })();
  return nc;
}

/**
 * The credentials file is read once, at start-up; a missing one stops the app
 * with its name, and so do credentials of another identity. Replies to our
 * requests come to the identity's private inbox prefix
 * (`_INBOX.<prefix>.<identity>`, auth/permissions.ts): nobody else may
 * subscribe there, and the services answer nowhere else.
 */
function credentialsFrom(path: string, inbox: string): Authenticator {
  let creds: Uint8Array;
  try {
    creds = readFileSync(path);
  } catch (error) {
    throw new Error(`NATS_CREDS: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  let allowed: string[];
  try {
    allowed = credsClaims(new TextDecoder().decode(creds)).subAllow;
  } catch {
    throw new Error(`NATS_CREDS: ${path} is not a NATS credentials file`);
  }
  const theirs = allowed.find((s) => s.startsWith('_INBOX.'));
  // An unrestricted user (no allow list) may use any inbox.
  if (allowed.length && theirs !== `${inbox}.>`) {
    throw new Error(`NATS_CREDS: ${path} holds credentials for ${theirs ?? 'no reply inbox'}, not for ${inbox}`);
  }
  return credsAuthenticator(creds);
}

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
      useFactory: connectNats,
      inject: [BUS_OPTIONS],
    };
    return {
      module: BusModule,
      global: true,
      imports: options.imports,
      providers: [optionsProvider, connectionProvider, BusClient, InboxPublisher, InboxReader, BusLifecycle],
      exports: [BUS_OPTIONS, NATS_CONNECTION, BusClient, InboxPublisher, InboxReader],
    };
  }
}
