import { deleteInboxStream } from '@mcpgw/bus';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDatabase,
  dropDatabase,
  freePort,
  isListening,
  natsServerAvailable,
  withDatabase,
  workspaceRoot,
} from '../src';
import { join } from 'node:path';
import { stopLauncher } from './support/banner';

/**
 * `OBSERVABILITY=1 npm start` (docs/operations/README.md, "Wiring"): the real start script
 * on free ports, on a database of its own, also runs Prometheus, prints its URL, and
 * Prometheus sees every app's management port up, with the alert rules loaded; Ctrl-C
 * stops it with the stack. Needs the `prometheus` binary (.ci/run installs it).
 */
const ADMIN_URL = process.env.TEST_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Targets {
  data: { activeTargets: { labels: { job: string }; scrapeUrl: string; health: string }[] };
}

describe('OBSERVABILITY=1 npm start', () => {
  const database = `mcpgw_obs_${process.pid}_${Date.now().toString(36)}`;
  const busPrefix = `test_obs_${process.pid}_${Date.now().toString(36)}`;
  const launchers: ChildProcess[] = [];

  afterAll(async () => {
    await Promise.all(launchers.map((child) => stopLauncher(child)));
    await dropDatabase(ADMIN_URL, database).catch(() => undefined);
    const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
    await deleteInboxStream(nc, busPrefix);
    await nc.close();
  });

  /** The start script on free ports with these settings; resolves with its banner once it is up. */
  async function launch(settings: Record<string, string>) {
    const [gatewayPort, msPort, adminPort, ...managementPorts] = await Promise.all(
      [1, 2, 3, 4, 5, 6].map(() => freePort()),
    );
    const child = spawn(process.execPath, [join(workspaceRoot(), 'tools/devstack/dist/bin/start-stack.js')], {
      env: {
        ...process.env,
        DATABASE_URL: withDatabase(ADMIN_URL, database),
        GATEWAY_PORT: String(gatewayPort),
        MESSAGE_SERVICE_PORT: String(msPort),
        GATEWAY_MANAGEMENT_PORT: String(managementPorts[0]),
        MESSAGE_SERVICE_MANAGEMENT_PORT: String(managementPorts[1]),
        AGENT_POD_MANAGEMENT_PORT: String(managementPorts[2]),
        ADMIN_PORT: String(adminPort),
        BUS_PREFIX: busPrefix,
        LOG_LEVEL: 'warn',
        ...settings,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    launchers.push(child);
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
    const stop = async () => {
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      return exited;
    };
    return { banner, managementPorts, stop };
  }

  beforeAll(() => createDatabase(ADMIN_URL, database));

  it('starts Prometheus on the stack, every app up in /api/v1/targets, and stops it with the stack', async () => {
    const prometheusPort = await freePort();
    const { banner, managementPorts, stop } = await launch({
      OBSERVABILITY: '1',
      PROMETHEUS_PORT: String(prometheusPort),
    });
    if (!process.env.NATS_URL && natsServerAvailable()) expect(banner).toContain('with NATS auth on');

    const prometheus = `http://127.0.0.1:${prometheusPort}`;
    expect(banner).toContain(`prometheus    ${prometheus}/targets`);
    const expected = {
      gateway: `http://127.0.0.1:${managementPorts[0]}/metrics`,
      'message-service': `http://127.0.0.1:${managementPorts[1]}/metrics`,
      'agent-pod': `http://127.0.0.1:${managementPorts[2]}/metrics`,
    };
    // Up once scraped (5 s interval): await it with a deadline.
    const deadline = Date.now() + 60_000;
    let seen: Record<string, string> = {};
    while (Date.now() < deadline) {
      const body = (await (await fetch(`${prometheus}/api/v1/targets`)).json()) as Targets;
      seen = Object.fromEntries(body.data.activeTargets.map((t) => [t.labels.job, `${t.scrapeUrl} ${t.health}`]));
      if (Object.values(seen).length === 3 && Object.values(seen).every((s) => s.endsWith(' up'))) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(seen).toEqual(Object.fromEntries(Object.entries(expected).map(([job, url]) => [job, `${url} up`])));
    const rules = (await (await fetch(`${prometheus}/api/v1/rules`)).json()) as { data: { groups: unknown[] } };
    expect(rules.data.groups.length).toBeGreaterThan(0);

    expect(await stop()).toBe(0);
    expect(await isListening('127.0.0.1', prometheusPort)).toBe(false);
  }, 240_000);

  it('without the binary says how to install it and runs the stack without Prometheus', async () => {
    const { banner, stop } = await launch({ OBSERVABILITY: '1', PROMETHEUS_BIN: '/nonexistent/prometheus' });
    expect(banner).toContain('OBSERVABILITY=1: no /nonexistent/prometheus binary that runs');
    expect(banner).toContain('apt-get install -y prometheus');
    expect(banner).toContain('Going on without Prometheus.');
    expect(banner).not.toContain('prometheus    http');
    expect(await stop()).toBe(0);
  }, 240_000);
});
