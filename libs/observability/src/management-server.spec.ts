import type { Server } from 'node:http';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startManagementServer } from './management-server';
import type { ReadinessCheck } from './readiness';

describe('management server', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  let markDraining: () => void = () => undefined;

  async function serve(checks: ReadinessCheck[]): Promise<string> {
    const registry = new Registry();
    registry.setDefaultLabels({ service: 'test' });
    const started = await startManagementServer({ checks, registry }, '127.0.0.1', 0);
    server = started.server;
    markDraining = started.markDraining;
    return `http://127.0.0.1:${started.port}`;
  }

  it('is live and ready when every check passes, and serves metrics', async () => {
    const url = await serve([{ name: 'db', check: async () => undefined }]);
    expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${url}/ready`)).json()).toEqual({ status: 'ready', checks: { db: 'ok' } });
    const metrics = await fetch(`${url}/metrics`);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
  });

  it('is live but not ready (503) when a dependency fails, naming it without its error text', async () => {
    const changes: [string, string, unknown][] = [];
    const raw = new Error('connect ECONNREFUSED 10.1.2.3:5432 (user mcpgw, password hunter2)');
    let failing = true;
    const started = await startManagementServer(
      {
        checks: [
          { name: 'db', check: async () => undefined },
          { name: 'nats', check: () => (failing ? Promise.reject(raw) : Promise.resolve()) },
          { name: 'migrations', check: async () => 'not applied: Grants1764470000000' },
          { name: 'slow', check: () => new Promise<void>(() => undefined) },
        ],
        registry: new Registry(),
        onChange: (name, state, cause) => changes.push([name, state, cause]),
        checkTimeoutMs: 200,
      },
      '127.0.0.1',
      0,
    );
    server = started.server;
    const url = `http://127.0.0.1:${started.port}`;
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const ready = await fetch(`${url}/ready`);
    expect(ready.status).toBe(503);
    const text = await ready.text();
    expect(JSON.parse(text)).toEqual({
      status: 'not_ready',
      checks: {
        db: 'ok',
        nats: 'unavailable',
        migrations: 'not applied: Grants1764470000000',
        slow: 'no answer in time',
      },
    });
    for (const leak of ['ECONNREFUSED', '10.1.2.3', 'hunter2', 'mcpgw']) expect(text).not.toContain(leak);
    // The log hears each change once, with the error /ready does not show.
    expect(changes).toEqual([
      ['nats', 'unavailable', raw],
      ['migrations', 'not applied: Grants1764470000000', undefined],
      ['slow', 'no answer in time', expect.any(Error)],
    ]);
    await fetch(`${url}/ready`);
    expect(changes).toHaveLength(3);
    failing = false;
    expect((await (await fetch(`${url}/ready`)).json()).checks.nats).toBe('ok');
    expect(changes[3]).toEqual(['nats', 'ok', undefined]);
  });

  it('is not ready (503) once draining, whatever the checks say, and still live', async () => {
    const url = await serve([{ name: 'db', check: async () => undefined }]);
    expect((await fetch(`${url}/ready`)).status).toBe(200);
    markDraining();
    const ready = await fetch(`${url}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'not_ready', checks: { db: 'ok', shutdown: 'draining' } });
    expect((await fetch(`${url}/health`)).status).toBe(200);
  });

  it('serves nothing else: other paths are 404, other methods 405', async () => {
    const url = await serve([]);
    expect((await fetch(`${url}/demo-agent/mcp`)).status).toBe(404);
    expect((await fetch(`${url}/metrics`, { method: 'POST' })).status).toBe(405);
  });
});
