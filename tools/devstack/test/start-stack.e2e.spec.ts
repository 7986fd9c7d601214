import { deleteInboxStream } from '@mcpgw/bus';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, natsServerAvailable, workspaceRoot } from '../src';
import { stopLauncher } from './support/banner';

/**
 * What the README promises: `npm start` on a machine without PostgreSQL gets an
 * embedded one, migrates, creates the demo agent and a key, and a call works.
 */
describe('npm start', () => {
  const dataDir = join(tmpdir(), `mcpgw-embedded-${process.pid}-${Date.now()}`);
  const busPrefix = `test_start_${process.pid}_${Date.now().toString(36)}`;
  let launcher: ChildProcess | undefined;

  afterAll(async () => {
    await stopLauncher(launcher);
    rmSync(dataDir, { recursive: true, force: true });
    const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
    await deleteInboxStream(nc, busPrefix);
    await nc.close();
  });

  it('serves a working MCP call from an embedded PostgreSQL, prints the key, and stops cleanly', async () => {
    const [gatewayPort, msPort, pgPort, adminPort, ...managementPorts] = await Promise.all(
      [1, 2, 3, 4, 5, 6, 7].map(() => freePort()),
    );
    const child = spawn(process.execPath, [join(workspaceRoot(), 'tools/devstack/dist/bin/start-stack.js')], {
      env: {
        ...process.env,
        DATABASE_URL: '',
        POSTGRES_EMBEDDED: 'always',
        EMBEDDED_POSTGRES_DIR: dataDir,
        EMBEDDED_POSTGRES_PORT: String(pgPort),
        GATEWAY_PORT: String(gatewayPort),
        MESSAGE_SERVICE_PORT: String(msPort),
        GATEWAY_MANAGEMENT_PORT: String(managementPorts[0]),
        MESSAGE_SERVICE_MANAGEMENT_PORT: String(managementPorts[1]),
        AGENT_POD_MANAGEMENT_PORT: String(managementPorts[2]),
        ADMIN_PORT: String(adminPort),
        BUS_PREFIX: busPrefix,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    launcher = child;
    let banner = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner within 150 s:\n${banner}`)), 150_000);
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        banner += chunk;
        if (banner.includes('Ctrl-C stops everything')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => reject(new Error(`npm start exited (${code}):\n${banner}`)));
    });

    expect(banner).toContain('Starting an embedded PostgreSQL');
    // Without NATS_URL and with the binary, npm start runs its own nats-server with NATS auth on.
    if (!process.env.NATS_URL && natsServerAvailable()) expect(banner).toContain('with NATS auth on');
    const key = /API key\s+(bak_\S+)/.exec(banner)?.[1];
    expect(key).toBeDefined();
    expect(banner).toContain(`curl -s http://localhost:${gatewayPort}/demo-agent/mcp`);
    expect(banner).toContain(`metrics       http://localhost:${managementPorts[0]}/metrics`);
    // Without OBSERVABILITY=1, no word of Prometheus (start-stack-observability.e2e.spec.ts has it on).
    expect(banner).not.toMatch(/prometheus|OBSERVABILITY/i);
    for (const port of managementPorts) expect((await fetch(`http://127.0.0.1:${port}/ready`)).status).toBe(200);

    const response = await fetch(`http://127.0.0.1:${gatewayPort}/demo-agent/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-agent-api-key': key!,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'web_search', arguments: { query: 'nats' } },
      }),
    });
    const body = await response.json();
    expect(body.result.structuredContent.results).toHaveLength(5);

    // The console, and a login link that logs in once: its code is in the fragment, never sent as a URL.
    const consoleUrl = `http://127.0.0.1:${adminPort}/console/`;
    expect(banner).toContain(`console       ${consoleUrl}`);
    const link = new RegExp(`login link    ${consoleUrl}#login=(adl_\\S+)`).exec(banner);
    expect(link, banner).not.toBeNull();
    const exchange = () =>
      fetch(`http://127.0.0.1:${adminPort}/admin/v1/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ login_code: link![1] }),
      });
    const first = await exchange();
    expect(first.status).toBe(201);
    const session = first.headers.getSetCookie().map((cookie) => cookie.split(';')[0]);
    const me = await fetch(`http://127.0.0.1:${adminPort}/admin/v1/session`, {
      headers: { cookie: session.join('; ') },
    });
    expect(await me.json()).toMatchObject({ via: 'session' });
    expect((await exchange()).status).toBe(401);

    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  }, 240_000);
});
