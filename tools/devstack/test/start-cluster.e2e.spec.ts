import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, dropDatabase, freePort, natsServerAvailable, withDatabase, workspaceRoot } from '../src';
import { stopLauncher } from './support/banner';
import { bannerOf } from './support/banner';

/**
 * What docs/getting-started.md promises for `NATS_CLUSTER=3 npm start`: the stack on a 3-node
 * nats-server cluster of its own (auth on, the inbox stream on all three), every
 * app ready on the list of the three URLs, and a call answered.
 */
const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

describe.skipIf(!!process.env.NATS_URL || !natsServerAvailable())('NATS_CLUSTER=3 npm start', () => {
  const tag = `${process.pid}_${Date.now().toString(36)}`;
  const database = `mcpgw_test_cluster_start_${tag}`;
  const grantKeyFile = join(tmpdir(), `mcpgw-cluster-start-${tag}`, 'grant-signing-key.json');
  let launcher: ChildProcess | undefined;

  afterAll(async () => {
    await stopLauncher(launcher);
    rmSync(join(grantKeyFile, '..'), { recursive: true, force: true });
    await dropDatabase(ADMIN_URL, database).catch(() => undefined);
  });

  it('starts three nats-servers, serves a call through them, and stops cleanly', async () => {
    await createDatabase(ADMIN_URL, database);
    const [gatewayPort, msPort, ...managementPorts] = await Promise.all([1, 2, 3, 4, 5].map(() => freePort()));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NATS_CLUSTER: '3',
      DATABASE_URL: withDatabase(ADMIN_URL, database),
      GRANT_SIGNING_KEY_FILE: grantKeyFile,
      GATEWAY_PORT: String(gatewayPort),
      MESSAGE_SERVICE_PORT: String(msPort),
      GATEWAY_MANAGEMENT_PORT: String(managementPorts[0]),
      MESSAGE_SERVICE_MANAGEMENT_PORT: String(managementPorts[1]),
      AGENT_POD_MANAGEMENT_PORT: String(managementPorts[2]),
      BUS_PREFIX: `test_cluster_start_${tag}`,
      LOG_LEVEL: 'warn',
    };
    delete env.NATS_URL;
    delete env.INBOX_REPLICAS;
    const child = spawn(process.execPath, [join(workspaceRoot(), 'tools/devstack/dist/bin/start-stack.js')], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    launcher = child;
    const banner = await bannerOf(child, 90_000);

    const started = /Started a 3-node nats-server cluster with NATS auth on at (\S+), inbox stream R3/.exec(banner);
    expect(started, banner).not.toBeNull();
    const servers = started![1].split(',');
    expect(servers).toHaveLength(3);
    expect(new Set(servers).size).toBe(3);
    // Every app is ready: connected to the cluster, and the message service's JetStream check passes
    // on the inbox stream it raised to three replicas.
    for (const port of managementPorts) expect((await fetch(`http://127.0.0.1:${port}/ready`)).status).toBe(200);
    const ready = (await (await fetch(`http://127.0.0.1:${managementPorts[1]}/ready`)).json()) as {
      checks: Record<string, string>;
    };
    expect(ready.checks).toMatchObject({ nats: 'ok', jetstream: 'ok' });

    const key = /API key\s+(bak_\S+)/.exec(banner)?.[1];
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
        params: { name: 'echo', arguments: { text: 'through three servers' } },
      }),
    });
    const body = (await response.json()) as { result?: { structuredContent?: { text?: string } } };
    expect(body.result?.structuredContent?.text).toBe('through three servers');

    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  }, 120_000);
});
