import { Stack, freePort, isListening, isolatedEnvironment, parsePrometheus, type Isolation } from '@mcpgw/devstack';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A NATS server that goes away and comes back (a restart, a failover): the gateway
 * is not ready meanwhile (`nats: reconnecting`, no error text), ready again after,
 * and counts the disconnect and the reconnect on /metrics. The gateway runs on a
 * NATS server of this file's own, since the shared one must not be restarted.
 */
describe('NATS restart', () => {
  let isolation: Isolation;
  let stack: Stack;
  let nats: ChildProcess | undefined;
  let port: number;
  let storeDir: string;
  let management: string;

  const startNats = async () => {
    nats = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
    for (let i = 0; i < 100 && !(await isListening('127.0.0.1', port)); i++) await delay(100);
  };
  const stopNats = async () => {
    const exited = new Promise((resolve) => nats!.once('exit', resolve));
    nats!.kill('SIGKILL');
    await exited;
    nats = undefined;
  };
  const ready = async () => {
    const response = await fetch(`${management}/ready`);
    return { status: response.status, body: await response.json() };
  };
  const events = async () => {
    const samples = parsePrometheus(await (await fetch(`${management}/metrics`)).text());
    const value = (event: string) =>
      samples.find((s) => s.name === 'mcpgw_nats_connection_events_total' && s.labels.event === event)?.value;
    return { disconnect: value('disconnect'), reconnect: value('reconnect') };
  };

  beforeAll(async () => {
    port = await freePort();
    storeDir = mkdtempSync(join(tmpdir(), 'mcpgw-nats-'));
    await startNats();
    isolation = await isolatedEnvironment('natsrestart', { migrated: true });
    stack = new Stack({
      databaseUrl: isolation.databaseUrl,
      natsUrl: `nats://127.0.0.1:${port}`,
      busPrefix: isolation.busPrefix,
      echoLogs: process.env.STACK_LOGS === '1',
      env: { LOG_LEVEL: 'info', DATABASE_POOL_SIZE: '2', GRANT_SIGNING_KEY_FILE: isolation.grantKeyFile },
    });
    const gateway = await stack.startGateway();
    management = gateway.process.managementUrl!;
  });

  afterAll(async () => {
    await stack?.stop();
    if (nats) await stopNats();
    await isolation?.remove();
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('is not ready while NATS is away, ready again after, and counts the disconnect and the reconnect', async () => {
    expect(await events()).toEqual({ disconnect: 0, reconnect: 0 });
    expect((await ready()).status).toBe(200);

    await stopNats();
    await expect
      .poll(async () => (await ready()).body.checks.nats, { timeout: 10_000, interval: 200 })
      .toBe('reconnecting');
    const away = await ready();
    expect(away.status).toBe(503);
    expect(JSON.stringify(away.body)).not.toMatch(/ECONNREFUSED|127\\.0\\.0\\.1|\\d{4,5}/);
    expect((await events()).disconnect).toBe(1);

    await startNats();
    await expect.poll(async () => (await ready()).status, { timeout: 15_000, interval: 200 }).toBe(200);
    expect(await events()).toEqual({ disconnect: 1, reconnect: 1 });
  }, 90_000);
});
