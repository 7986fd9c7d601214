import { BusPattern, InvalidRequestError, defineEvent } from '@mcpgw/contracts';
import { Controller, Logger, Module } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BusClient } from '../src/bus-client';
import { BusExceptionFilter } from '../src/bus-exception.filter';
import { BusServer } from '../src/bus-server';
import { decodeJson } from '../src/json';

const seen: unknown[] = [];

/** An event of the test's own, with a check that lets anything through. */
const probeEvent = defineEvent<unknown>('probe.event', (plain) => ({ ok: true, value: plain }));

@Controller()
class ProbeController {
  @MessagePattern(BusPattern.CreateChannel)
  create(@Payload() req: { agent_id: string }) {
    if (req.agent_id === 'bad') throw new InvalidRequestError('nope', ['agent_id x']);
    if (req.agent_id === 'boom') throw new Error('secret internals');
    return { id: 'c1', agent_id: req.agent_id, created_at: 'now' };
  }

  @EventPattern('probe.event', { fanout: true })
  event(@Payload() payload: unknown) {
    seen.push(payload);
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

/** The transport against the real NATS server, under a prefix of its own. */
describe('BusServer and BusClient over NATS', () => {
  const prefix = `test_bus_${process.pid}_${Date.now().toString(36)}`;
  let nc: NatsConnection;
  let client: BusClient;
  let close: () => Promise<void>;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
    const moduleRef = await Test.createTestingModule({ imports: [ProbeModule] }).compile();
    const app = moduleRef.createNestMicroservice({ strategy: new BusServer(nc, prefix, 'probe') });
    app.useGlobalFilters(new BusExceptionFilter());
    await app.listen();
    client = new BusClient(nc, { url: '', prefix, name: 'test' });
    close = () => app.close();
  });

  afterAll(async () => {
    await close?.();
    await nc?.close();
  });

  it('answers a typed request with the handler value', async () => {
    await expect(client.request(BusPattern.CreateChannel, { agent_id: 'a1' })).resolves.toEqual({
      id: 'c1',
      agent_id: 'a1',
      created_at: 'now',
    });
  });

  it('passes a ServiceError through with its code and details', async () => {
    await expect(client.request(BusPattern.CreateChannel, { agent_id: 'bad' })).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'nope',
      details: ['agent_id x'],
    });
  });

  it('hides any other error behind "internal error"', async () => {
    const error = await client.request(BusPattern.CreateChannel, { agent_id: 'boom' }).catch((e) => e);
    expect(error).toMatchObject({ code: 'internal', message: 'internal error' });
  });

  it('refuses a payload that is not JSON', async () => {
    const answer = await nc.request(`${prefix}.${BusPattern.CreateChannel}`, new TextEncoder().encode('{oops'));
    expect(decodeJson(answer.data)).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
  });

  it('reports "no service is listening" as unavailable', async () => {
    const other = new BusClient(nc, { url: '', prefix: `${prefix}_nobody`, name: 'test' });
    await expect(other.request(BusPattern.CreateChannel, { agent_id: 'a' }, 1_000)).rejects.toMatchObject({
      code: 'unavailable',
    });
  });

  it('delivers fan-out events', async () => {
    client.publish(probeEvent, { hello: 1 });
    await expect.poll(() => seen, { timeout: 2_000 }).toContainEqual({ hello: 1 });
  });
});
