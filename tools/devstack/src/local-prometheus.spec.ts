import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prometheusAvailable, prometheusConfig, startLocalPrometheus, type LocalPrometheus } from './local-prometheus';
import { freePort, isListening } from './ports';
import { workspaceRoot } from './stack';

/**
 * The Prometheus of `OBSERVABILITY=1 npm start`, with the real binary (Debian package
 * `prometheus`; .ci/run installs it): its config passes promtool with the project's rules,
 * it scrapes an HTTP server standing in for an app's management port and reports a
 * stopped one down, it loads the rules, and it leaves nothing behind when stopped.
 */
const RULES = join(workspaceRoot(__dirname), 'deploy/observability/prometheus/rules.yml');

describe('local Prometheus', () => {
  it('a missing binary says how to install it', () => {
    const missing = prometheusAvailable('/nonexistent/prometheus');
    expect(missing.ok).toBe(false);
    expect((missing as { reason: string }).reason).toContain('apt-get install -y prometheus');
    expect(prometheusAvailable().ok).toBe(true);
  });

  it('writes a config that promtool accepts, the rules included; a broken rule file fails it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcpgw-prometheus-config-'));
    try {
      const check = (rules: string) => {
        writeFileSync(
          join(dir, 'prometheus.yml'),
          prometheusConfig([{ job: 'gateway', managementUrl: 'http://127.0.0.1:9000' }], [rules]),
        );
        return spawnSync('promtool', ['check', 'config', join(dir, 'prometheus.yml')], { encoding: 'utf8' });
      };
      const good = check(RULES);
      expect(good.status, good.stdout + good.stderr).toBe(0);
      writeFileSync(
        join(dir, 'broken.yml'),
        'groups:\n  - name: x\n    rules:\n      - alert: X\n        expr: rate(\n',
      );
      expect(check(join(dir, 'broken.yml')).status).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('running', () => {
    let app: Server;
    let appPort: number;
    let gonePort: number;
    let prometheus: LocalPrometheus;

    beforeAll(async () => {
      app = createServer((req, res) => {
        if (req.url !== '/metrics') return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end('mcpgw_test_up 1\n');
      });
      appPort = await freePort();
      gonePort = await freePort();
      await new Promise<void>((resolve) => app.listen(appPort, '127.0.0.1', resolve));
      prometheus = await startLocalPrometheus({
        port: await freePort(),
        intervalSeconds: 1,
        ruleFiles: [RULES],
        targets: [
          { job: 'gateway', managementUrl: `http://127.0.0.1:${appPort}` },
          { job: 'agent-pod', managementUrl: `http://127.0.0.1:${gonePort}` },
        ],
      });
    }, 40_000);
    afterAll(async () => {
      await prometheus?.stop();
      app?.close();
    });

    it('scrapes a live target up and a gone one down, with the rules loaded', async () => {
      const deadline = Date.now() + 20_000;
      let health: Record<string, string> = {};
      while (Date.now() < deadline) {
        const body = (await (await fetch(`${prometheus.url}/api/v1/targets`)).json()) as {
          data: { activeTargets: { labels: { job: string }; health: string }[] };
        };
        health = Object.fromEntries(body.data.activeTargets.map((t) => [t.labels.job, t.health]));
        if (health.gateway === 'up' && health['agent-pod'] === 'down') break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(health).toEqual({ gateway: 'up', 'agent-pod': 'down' });
      const rules = (await (await fetch(`${prometheus.url}/api/v1/rules`)).json()) as {
        data: { groups: { name: string }[] };
      };
      expect(rules.data.groups.map((g) => g.name)).toContain('mcpgw-slis');
    }, 30_000);

    it('stops: its port closed, its directory gone', async () => {
      const port = Number(new URL(prometheus.url).port);
      await prometheus.stop();
      expect(await isListening('127.0.0.1', port)).toBe(false);
      expect(existsSync(prometheus.dir)).toBe(false);
    });
  });

  it('a port already taken (by a server that never answers) fails the start, within its deadline', async () => {
    const taken = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      await expect(startLocalPrometheus({ port, targets: [], ruleFiles: [] })).rejects.toThrow(
        /prometheus exited at start|not ready/,
      );
    } finally {
      taken.close();
    }
  }, 40_000);
});
