import { BusPattern, InvalidRequestError, defineEvent } from '@mcpgw/contracts';
import { Controller, Logger, Module } from '@nestjs/common';
import { Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { connect, headers, type NatsConnection } from 'nats';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { freePort, isListening } from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BusClient } from '../src/bus-client';
import { BusExceptionFilter } from '../src/bus-exception.filter';
import { BusServer } from '../src/bus-server';
import type { BusContext } from '../src/bus-server';
import type { CallIds } from '../src/bus-tracing';
import { busMeter } from '../src/bus-meter';
import { decodeJson, encodeJson } from '../src/json';

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

  /** Answers with the call ids the transport handed it as its context. */
  @MessagePattern(BusPattern.ListMessages)
  list(@Payload() _req: unknown, @Ctx() ctx: BusContext) {
    return { messages: [], ids: ctx.ids };
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
  let server: BusServer;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    // The test asks as the gateway would: the server answers only in the asker's own inbox.
    nc = await connect({
      servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
      inboxPrefix: `_INBOX.${prefix}.gateway`,
    });
    const moduleRef = await Test.createTestingModule({ imports: [ProbeModule] }).compile();
    server = new BusServer(nc, prefix, 'probe');
    const app = moduleRef.createNestMicroservice({ strategy: server });
    app.useGlobalFilters(new BusExceptionFilter());
    await app.listen();
    client = new BusClient(nc, { url: '', prefix, name: 'test', identity: { role: 'gateway' } });
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

  it("answers only in the asker's own inbox: any other reply subject is dropped unhandled, and counted", async () => {
    const dropped = () =>
      [...busMeter.dropped()].find(([labels]) => labels.family === BusPattern.CreateChannel)?.[1] ?? 0;
    const before = dropped();
    const elsewhere = `_INBOX.${prefix}.agent.a1.stolen`;
    const heard: unknown[] = [];
    const sub = nc.subscribe(elsewhere, { callback: (_e, msg) => heard.push(msg.data) });
    nc.publish(`${prefix}.${BusPattern.CreateChannel}`, encodeJson({ agent_id: 'a1' }), { reply: elsewhere });
    nc.publish(`${prefix}.${BusPattern.CreateChannel}`, encodeJson({ agent_id: 'a1' }), {
      reply: '$JS.API.STREAM.PURGE.X',
    });
    await expect.poll(dropped, { timeout: 2_000 }).toBe(before + 2);
    await nc.flush();
    sub.unsubscribe();
    expect(heard).toEqual([]);
  });

  it('reports "no service is listening" as unavailable', async () => {
    const other = new BusClient(nc, {
      url: '',
      prefix: `${prefix}_nobody`,
      name: 'test',
      identity: { role: 'gateway' },
    });
    await expect(other.request(BusPattern.CreateChannel, { agent_id: 'a' }, 1_000)).rejects.toMatchObject({
      code: 'unavailable',
    });
  });

  it('delivers fan-out events', async () => {
    client.publish(probeEvent, { hello: 1 });
    await expect.poll(() => seen, { timeout: 2_000 }).toContainEqual({ hello: 1 });
  });

  it("hands each handler the call's request id and trace id from the headers, and drops an unsafe id", async () => {
    const answer = (await client.request(BusPattern.ListMessages, { channel_id: 'x' } as never, undefined, {
      requestId: 'req-42',
    })) as unknown as { ids: CallIds };
    expect(answer.ids).toEqual({ request_id: 'req-42' });

    const hdrs = headers();
    hdrs.set('traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    hdrs.set('Mcpgw-Request-Id', 'has space');
    const raw = await nc.request(`${prefix}.${BusPattern.ListMessages}`, new TextEncoder().encode('{}'), {
      headers: hdrs,
    });
    expect(decodeJson(raw.data)).toMatchObject({
      ok: true,
      data: { ids: { trace_id: '0af7651916cd43dd8448eb211c80319c' } },
    });
    expect((decodeJson(raw.data) as { data: { ids: CallIds } }).data.ids.request_id).toBeUndefined();
  });

  it('is ready (consumers) while its handlers are subscribed', async () => {
    await expect(server.readiness().check()).resolves.toBeUndefined();
    await expect(client.readiness().check()).resolves.toBeUndefined();
  });
});

/**
 * An essential subscription the server closes (here: a permission the NATS user does
 * not have) turns the `nats` check to `subscription closed`. On a NATS server of this
 * file's own, with one user allowed everything but `forbidden.>`.
 */
describe('essential subscriptions', () => {
  let nats: ChildProcess;
  let dir: string;
  let nc: NatsConnection;

  beforeAll(async () => {
    const port = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'mcpgw-nats-perm-'));
    const config = join(dir, 'nats.conf');
    writeFileSync(
      config,
      `listen: 127.0.0.1:${port}\nauthorization { users = [ { user: app, password: app, permissions: { subscribe: { deny: "forbidden.>" } } } ] }\n`,
    );
    nats = spawn('nats-server', ['-c', config], { stdio: 'ignore' });
    for (let i = 0; i < 100 && !(await isListening('127.0.0.1', port)); i++) await delay(100);
    nc = await connect({ servers: `nats://127.0.0.1:${port}`, user: 'app', pass: 'app' });
  });

  afterAll(async () => {
    await nc?.close();
    nats?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a closed essential subscription makes the bus not ready; a plain one does not', async () => {
    const client = new BusClient(nc, { url: '', prefix: 'forbidden', name: 'test', identity: { role: 'gateway' } });
    const allowed = new BusClient(nc, { url: '', prefix: 'allowed', name: 'test', identity: { role: 'gateway' } });
    allowed.subscribe(probeEvent, () => undefined, { essential: true });
    client.subscribe(probeEvent, () => undefined); // not essential: refused, but /ready does not care
    await nc.flush();
    await expect(allowed.readiness().check()).resolves.toBeUndefined();

    const essential = client.subscribe(probeEvent, () => undefined, { essential: true });
    await expect.poll(() => client.readiness().check(), { timeout: 5_000 }).toBe('subscription closed');
    // Unsubscribed, it is no longer watched.
    essential.unsubscribe();
    await expect(client.readiness().check()).resolves.toBeUndefined();
  });
});
