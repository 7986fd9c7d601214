import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A Prometheus of our own for `OBSERVABILITY=1 npm start`: the `prometheus` binary (Debian
 * package `prometheus`) on a loopback port, its config and data in a temp directory removed
 * when it stops, scraping the stack's management URLs and loading the alert rules
 * (deploy/observability/prometheus/rules.yml). The job names are the apps' names, as in the
 * compose profile and the prod overlay's ServiceMonitors (docs/operations/README.md, "Wiring").
 */
export interface ScrapeTarget {
  /** The job: the app's name (gateway, message-service, agent-pod). */
  job: string;
  /** Its management URL, e.g. http://127.0.0.1:9000 (scraped at /metrics). */
  managementUrl: string;
}

export interface LocalPrometheusOptions {
  targets: ScrapeTarget[];
  /** Rule files to load (absolute paths). */
  ruleFiles: string[];
  port: number;
  /** Scrape and rule evaluation interval; short, so that a target shows up within seconds. */
  intervalSeconds?: number;
  /** The binary (default `prometheus` on the PATH). */
  binary?: string;
}

export interface LocalPrometheus {
  url: string;
  dir: string;
  stop(): Promise<void>;
}

const INSTALL_HINT = 'sudo apt-get install -y prometheus (Debian/Ubuntu), or PROMETHEUS_BIN=/path/to/prometheus';

/** Whether the binary runs; else why not, with how to install it. */
export function prometheusAvailable(binary = 'prometheus'): { ok: true } | { ok: false; reason: string } {
  const run = spawnSync(binary, ['--version'], { stdio: 'ignore' });
  if (run.status === 0) return { ok: true };
  return {
    ok: false,
    reason: `no ${binary} binary that runs (${run.error?.message ?? `exit ${run.status}`}); install it: ${INSTALL_HINT}`,
  };
}

/**
 * The Prometheus config: one job per app, static targets host:port from the management
 * URLs. Written as JSON, which is YAML too.
 */
export function prometheusConfig(targets: ScrapeTarget[], ruleFiles: string[], intervalSeconds = 5): string {
  const jobs = new Map<string, string[]>();
  for (const t of targets) {
    const url = new URL(t.managementUrl);
    jobs.set(t.job, [...(jobs.get(t.job) ?? []), url.host]);
  }
  return JSON.stringify(
    {
      global: {
        scrape_interval: `${intervalSeconds}s`,
        scrape_timeout: `${Math.min(intervalSeconds, 10)}s`,
        evaluation_interval: `${intervalSeconds}s`,
      },
      rule_files: ruleFiles,
      scrape_configs: [...jobs].map(([job, hosts]) => ({ job_name: job, static_configs: [{ targets: hosts }] })),
    },
    null,
    2,
  );
}

/** Start it; resolves once /-/ready answers 200, rejects (and cleans up) if it exits or takes over 30 s. */
export async function startLocalPrometheus(options: LocalPrometheusOptions): Promise<LocalPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-prometheus-'));
  const configFile = join(dir, 'prometheus.yml');
  writeFileSync(configFile, prometheusConfig(options.targets, options.ruleFiles, options.intervalSeconds));
  const url = `http://127.0.0.1:${options.port}`;
  let output = '';
  const child: ChildProcess = spawn(
    options.binary ?? 'prometheus',
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${options.port}`,
      // The latency histograms carry each call's id as an exemplar (docs/operations/README.md, Dashboards).
      '--enable-feature=exemplar-storage',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output = (output + chunk).slice(-4_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  // The launcher exiting any other way (an error after this start) takes it along.
  const killNow = () => {
    if (running()) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', killNow);
  const stop = async () => {
    process.removeListener('exit', killNow);
    if (running()) {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (running()) {
        child.kill('SIGKILL');
        await exited;
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (!running()) {
      await stop();
      throw new Error(`prometheus exited at start:\n${output}`);
    }
    const ready = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1_000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return { url, dir, stop };
    await new Promise((r) => setTimeout(r, 200));
  }
  await stop();
  throw new Error(`prometheus was not ready on ${url} within 30 s:\n${output}`);
}
