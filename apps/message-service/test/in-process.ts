import { BusExceptionFilter, BusServer, NATS_CONNECTION } from '@mcpgw/bus';
import { isolatedEnvironment, type Isolation } from '@mcpgw/devstack';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { NatsConnection } from 'nats';
import { AppModule } from '../src/app.module';

export interface InProcessMessageService {
  isolation: Isolation;
  app: NestFastifyApplication;
  stop(): Promise<void>;
}

/**
 * The message service in this test's process (its services reachable with
 * `app.get`), on a migrated database and an authenticated bus of its own, with
 * its bus handlers serving. `env` adds settings (e.g. short retentions).
 */
export async function startInProcessMessageService(
  label: string,
  env: Record<string, string> = {},
): Promise<InProcessMessageService> {
  const isolation = await isolatedEnvironment(label, { migrated: true });
  Object.assign(process.env, {
    DATABASE_URL: isolation.databaseUrl,
    NATS_URL: isolation.natsUrl,
    NATS_CREDS: (await isolation.natsCreds?.('message-service', '')) ?? '',
    BUS_PREFIX: isolation.busPrefix,
    LOG_LEVEL: 'error',
    ...env,
  });
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
  const strategy = new BusServer(app.get<NatsConnection>(NATS_CONNECTION), isolation.busPrefix, 'message-service');
  app.connectMicroservice({ strategy }, { deferInitialization: true }).useGlobalFilters(new BusExceptionFilter());
  await app.init();
  await app.startAllMicroservices();
  return {
    isolation,
    app,
    stop: async () => {
      await app.close();
      await isolation.remove();
    },
  };
}
