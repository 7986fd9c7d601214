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

  it('is live but not ready (503) when a dependency fails, naming it', async () => {
    const url = await serve([
      { name: 'db', check: async () => undefined },
      { name: 'nats', check: () => Promise.reject(new Error('connection closed')) },
    ]);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const ready = await fetch(`${url}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'not_ready', checks: { db: 'ok', nats: 'connection closed' } });
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
