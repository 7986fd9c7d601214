import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createServer } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { Draining, type DrainParticipant } from './draining';
import { shutdown } from './shutdown';

/** An app with no HTTP port and no bus: only its participants and its close. */
function fakeApp(participants: DrainParticipant[], close: () => Promise<void> = async () => undefined) {
  const draining = new Draining();
  for (const participant of participants) draining.register(participant);
  const app = {
    get: () => draining,
    getHttpServer: () => createServer(),
    getHttpAdapter: () => ({ getInstance: () => ({ close: async () => undefined }) }),
    close,
  } as unknown as NestFastifyApplication;
  const management = { server: createServer(), port: 0, markDraining: vi.fn() };
  const logger = { log: vi.fn(), warn: vi.fn(), error: vi.fn() };
  return { app, management, logger, draining };
}

describe('shutdown', () => {
  it('runs the steps in order, closes last, and exits 0 when everything settles', async () => {
    const seen: string[] = [];
    const { app, management, logger, draining } = fakeApp(
      [
        {
          name: 'work',
          stopIntake: () => void seen.push('stop-intake'),
          endStreams: () => void seen.push('end-streams'),
          settled: async () => void seen.push('settled'),
          handBack: async () => void seen.push('hand-back'),
        },
      ],
      async () => void seen.push('close'),
    );
    const code = await shutdown({ app, management, logger, graceMs: 1_000, exit: vi.fn() }, 'SIGTERM');
    expect(code).toBe(0);
    expect(seen).toEqual(['stop-intake', 'end-streams', 'settled', 'close']);
    expect(management.markDraining).toHaveBeenCalled();
    expect(draining.active).toBe(true);
  });

  it('past the grace, hands back what did not settle, and still exits 0', async () => {
    const handBack = vi.fn(async () => undefined);
    const { app, management, logger } = fakeApp([{ name: 'slow', settled: () => delay(10_000), handBack }]);
    const began = Date.now();
    const code = await shutdown({ app, management, logger, graceMs: 100, exit: vi.fn() }, 'SIGTERM');
    expect(code).toBe(0);
    expect(handBack).toHaveBeenCalled();
    expect(Date.now() - began).toBeLessThan(1_000);
  });

  it('exits 1 when work that cannot be handed back outlives the grace, naming it', async () => {
    const { app, management, logger } = fakeApp([
      { name: 'calls', settled: () => delay(10_000), pending: () => ['1 call(s) running'] },
    ]);
    const code = await shutdown({ app, management, logger, graceMs: 100, exit: vi.fn() }, 'SIGTERM');
    expect(code).toBe(1);
    expect(logger.warn).toHaveBeenCalledWith(
      expect.objectContaining({ pending: ['calls: 1 call(s) running'] }),
      'Shutdown',
    );
  });
});
