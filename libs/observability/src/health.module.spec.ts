import { Test } from '@nestjs/testing';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { describe, expect, it } from 'vitest';
import { HealthModule } from './health.module';

async function appWith(checks: { name: string; check: () => Promise<void> }[]) {
  const moduleRef = await Test.createTestingModule({
    imports: [HealthModule.forChecks({ inject: [], useFactory: () => checks })],
  }).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

describe('HealthModule', () => {
  it('is live and ready when every check passes', async () => {
    const app = await appWith([{ name: 'db', check: async () => undefined }]);
    const fastify = app.getHttpAdapter().getInstance();
    expect((await fastify.inject({ url: '/health' })).json()).toEqual({ status: 'ok' });
    expect((await fastify.inject({ url: '/ready' })).json()).toEqual({ status: 'ready', checks: { db: 'ok' } });
    await app.close();
  });

  it('is live but not ready (503) when a dependency fails, naming it', async () => {
    const app = await appWith([
      { name: 'db', check: async () => undefined },
      { name: 'nats', check: () => Promise.reject(new Error('connection closed')) },
    ]);
    const fastify = app.getHttpAdapter().getInstance();
    expect((await fastify.inject({ url: '/health' })).statusCode).toBe(200);
    const ready = await fastify.inject({ url: '/ready' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({ status: 'not_ready', checks: { db: 'ok', nats: 'connection closed' } });
    await app.close();
  });
});
