import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@mcpgw/devstack';
import { stringify } from 'yaml';

/** The Debian package `prometheus` (`.ci/run` installs it); PROMETHEUS_BIN for another. */
export const PROMETHEUS_BIN = process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus';
export const prometheusInstalled = existsSync(PROMETHEUS_BIN);

export interface Series {
  metric: Record<string, string>;
  value?: [number, string];
}

export interface LivePrometheus {
  url: string;
  /** An instant query (`/api/v1/query`); a PromQL error throws with Prometheus's message. */
  query(expr: string): Promise<Series[]>;
  /** A path of the HTTP API (`/api/v1/...`), its `data`. */
  api<T>(path: string): Promise<T>;
  stop(): Promise<void>;
}

/**
 * A real Prometheus on a free loopback port, its TSDB in a temporary directory: it
 * scrapes `targets` (host:port, `/metrics`) and evaluates `rules` (a rule file's
 * content) at `intervalSeconds`, with exemplar storage on (the latency buckets'
 * call ids). Resolves once `/-/ready` answers.
 */
export async function startPrometheus(options: {
  targets: string[];
  rules: unknown;
  intervalSeconds?: number;
}): Promise<LivePrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-prometheus-'));
  const interval = `${options.intervalSeconds ?? 1}s`;
  writeFileSync(join(dir, 'rules.yml'), stringify(options.rules));
  writeFileSync(
    join(dir, 'prometheus.yml'),
    stringify({
      global: { scrape_interval: interval, evaluation_interval: interval, scrape_timeout: interval },
      rule_files: [join(dir, 'rules.yml')],
      scrape_configs: [{ job_name: 'mcpgw', static_configs: [{ targets: options.targets }] }],
    }),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child: ChildProcess = spawn(
    PROMETHEUS_BIN,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--enable-feature=exemplar-storage',
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4_000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`prometheus exited (${child.exitCode}): ${output}`);
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus not ready within 20 s: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${url}${path}`);
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`${path}: ${body.error ?? response.status}`);
    return body.data;
  };
  return {
    url,
    api,
    query: async (expr) => (await api<{ result: Series[] }>(`/api/v1/query?query=${encodeURIComponent(expr)}`)).result,
    stop,
  };
}
