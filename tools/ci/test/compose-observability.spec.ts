import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';

/**
 * docker-compose.yml's `observability` profile (docs/operations/README.md, "Wiring"), read
 * off `docker-compose config` (with .env.example) as compose resolves it:
 *
 * - prometheus and grafana run in that profile only, from pinned images, so a plain
 *   `docker compose up` is unchanged; the apps' management ports stay on loopback unless
 *   MANAGEMENT_HOST=0.0.0.0 is given;
 * - Prometheus's config (deploy/observability/prometheus/prometheus.compose.yml, through its
 *   mount) has one job per app, scraping that service's MANAGEMENT_PORT on a network
 *   Prometheus shares with it; its rule files are mounted from files that exist, rules.yml
 *   among them; `promtool check config` passes on it (rule files included);
 * - Grafana's provisioning directory exists, its data source is the profile's Prometheus on
 *   a network they share, its dashboards provider reads a mounted directory that exists
 *   (deploy/observability/grafana/dashboards).
 *
 * Negative controls feed broken copies (of the rendered file and of the Prometheus config)
 * to the same checks.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const APPS = ['gateway', 'message-service', 'agent-pod'] as const;
/** The apps' own defaults (libs/config: ManagementEnv per app), when compose sets none. */
const MANAGEMENT_PORT_DEFAULT: Record<string, number> = { gateway: 9000, 'message-service': 9100, 'agent-pod': 9200 };
const RULES = join(root, 'deploy/observability/prometheus/rules.yml');
const DASHBOARDS = join(root, 'deploy/observability/grafana/dashboards');

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  networks?: Record<string, unknown>;
  profiles?: string[];
}
interface Compose {
  services: Record<string, Service>;
}
interface PrometheusConfig {
  rule_files?: string[];
  scrape_configs?: {
    job_name: string;
    static_configs?: { targets: string[] }[];
    dns_sd_configs?: { names: string[]; type?: string; port: number }[];
  }[];
}
type Read = (path: string) => string;

function rendered(env: Record<string, string | undefined> = {}): Compose | undefined {
  const run = spawnSync(
    'docker-compose',
    ['-f', join(root, 'docker-compose.yml'), '--env-file', join(root, '.env.example'), 'config'],
    { cwd: root, encoding: 'utf8', env: { ...process.env, MANAGEMENT_HOST: undefined, ...env } },
  );
  if (run.error) return undefined;
  if (run.status !== 0) throw new Error(`docker-compose config failed: ${run.stderr}`);
  return parse(run.stdout) as Compose;
}

/** host path → container path of a service's bind mounts (docker-compose config makes them absolute). */
function binds(service: Service): { source: string; target: string }[] {
  return (service.volumes ?? [])
    .map((v) => v.split(':'))
    .filter(([source]) => source.startsWith('/'))
    .map(([source, target]) => ({ source, target }));
}

/** The host path mounted at (or above) a container path. */
function hostPathOf(service: Service, path: string): string | undefined {
  for (const { source, target } of binds(service)) {
    if (path === target) return source;
    if (path.startsWith(`${target}/`)) return join(source, path.slice(target.length + 1));
  }
  return undefined;
}

const networksOf = (service: Service) => Object.keys(service.networks ?? {});
const shareNetwork = (a: Service, b: Service) => networksOf(a).some((n) => networksOf(b).includes(n));

/** The Prometheus config file on the host, as the prometheus service mounts it. */
function prometheusConfigPath(prometheus: Service): string | undefined {
  const flag = (prometheus.command ?? []).find((arg) => arg.startsWith('--config.file='));
  return flag ? hostPathOf(prometheus, flag.slice('--config.file='.length)) : undefined;
}

/** host:port of each job's targets (static, or the DNS names and port it resolves). */
function targetsOf(job: NonNullable<PrometheusConfig['scrape_configs']>[number]): string[] {
  return [
    ...(job.static_configs ?? []).flatMap((c) => c.targets),
    ...(job.dns_sd_configs ?? []).flatMap((c) => c.names.map((n) => `${n}:${c.port}`)),
  ];
}

function observabilityProblems(compose: Compose, read: Read = (p) => readFileSync(p, 'utf8')): string[] {
  const problems: string[] = [];
  const { prometheus, grafana } = compose.services;
  if (!prometheus || !grafana) return ['prometheus and grafana: both needed'];
  for (const [name, service] of Object.entries({ prometheus, grafana })) {
    if (JSON.stringify(service.profiles) !== '["observability"]')
      problems.push(`${name}: profiles ${JSON.stringify(service.profiles)}, expected ["observability"] only`);
    if (!/:v?\d+\.\d+\.\d+$/.test(service.image ?? '')) problems.push(`${name}: image ${service.image} is not pinned`);
  }

  // Prometheus: its config, its rule files, one job per app on the app's management port.
  const configPath = prometheusConfigPath(prometheus);
  if (!configPath || !existsSync(configPath)) return [...problems, 'prometheus: --config.file is not a mounted file'];
  const config = parse(read(configPath)) as PrometheusConfig;
  const rules = (config.rule_files ?? []).map((f) => ({ f, host: hostPathOf(prometheus, f) }));
  for (const { f, host } of rules)
    if (!host || !existsSync(host)) problems.push(`prometheus: rule file ${f} is mounted from no existing file`);
  if (!rules.some(({ host }) => host === RULES)) problems.push(`prometheus: does not load ${RULES}`);
  const jobs = config.scrape_configs ?? [];
  for (const job of jobs)
    if (!(APPS as readonly string[]).includes(job.job_name)) problems.push(`prometheus: job ${job.job_name} is no app`);
  for (const app of APPS) {
    const job = jobs.find((j) => j.job_name === app);
    if (!job) {
      problems.push(`${app}: no scrape job`);
      continue;
    }
    const service = compose.services[app];
    const port = Number(service.environment?.MANAGEMENT_PORT ?? MANAGEMENT_PORT_DEFAULT[app]);
    const targets = targetsOf(job);
    if (targets.join() !== `${app}:${port}`)
      problems.push(
        `${app}: Prometheus scrapes ${targets.join(', ') || 'nothing'}, its management port is ${app}:${port}`,
      );
    if (!shareNetwork(prometheus, service)) problems.push(`${app}: shares no network with prometheus`);
  }

  // Grafana: provisioning from an existing directory; Prometheus as data source; the dashboards directory.
  const provisioning = hostPathOf(grafana, '/etc/grafana/provisioning');
  if (!provisioning || !existsSync(provisioning) || !statSync(provisioning).isDirectory())
    return [...problems, 'grafana: /etc/grafana/provisioning is mounted from no existing directory'];
  const filesIn = (dir: string) =>
    existsSync(join(provisioning, dir))
      ? readdirSync(join(provisioning, dir))
          .filter((f) => /\.ya?ml$/.test(f))
          .map((f) => parse(read(join(provisioning, dir, f))))
      : [];
  const sources = filesIn('datasources').flatMap((f) => f.datasources ?? []);
  const promSource = sources.find((d: { type: string }) => d.type === 'prometheus');
  if (promSource?.url !== 'http://prometheus:9090' || !shareNetwork(grafana, prometheus))
    problems.push(
      `grafana: no prometheus data source at http://prometheus:9090 on a network it shares with prometheus`,
    );
  const providers = filesIn('dashboards').flatMap((f) => f.providers ?? []);
  const dirs = providers.map((p: { options?: { path?: string } }) => hostPathOf(grafana, p.options?.path ?? ''));
  for (const [i, dir] of dirs.entries())
    if (!dir || !existsSync(dir))
      problems.push(`grafana: dashboards provider ${i} reads no mounted, existing directory`);
  if (!dirs.includes(DASHBOARDS)) problems.push(`grafana: no dashboards provider reads ${DASHBOARDS}`);
  return problems;
}

/** `promtool check config` on a copy of the Prometheus config whose rule files are the mounted host files. */
function promtoolCheck(prometheus: Service, text: string, scratch: string): { ok: boolean; output: string } {
  const config = parse(text) as PrometheusConfig;
  config.rule_files = (config.rule_files ?? []).map((f) => hostPathOf(prometheus, f) ?? f);
  const file = join(scratch, 'prometheus.yml');
  writeFileSync(file, stringify(config));
  const run = spawnSync('promtool', ['check', 'config', file], { encoding: 'utf8' });
  if (run.error) throw new Error(`promtool: ${run.error.message} (Debian package prometheus; .ci/run installs it)`);
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
}

const compose = rendered();
const scratch = mkdtempSync(join(tmpdir(), 'mcpgw-compose-observability-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.skipIf(!compose && !process.env.CI)("docker-compose.yml's observability profile", () => {
  const config = (): Compose => {
    if (!compose) throw new Error('docker-compose is not installed (.ci/run installs it)');
    return structuredClone(compose);
  };
  const prometheusConfigText = () => readFileSync(prometheusConfigPath(config().services.prometheus)!, 'utf8');

  it('scrapes every app on its management port, loads rules.yml, provisions Grafana from paths that exist', () => {
    expect(observabilityProblems(config())).toEqual([]);
  });

  it('keeps the management ports on loopback unless MANAGEMENT_HOST=0.0.0.0 is given', () => {
    const open = rendered({ MANAGEMENT_HOST: '0.0.0.0' })!;
    for (const app of APPS) {
      expect(config().services[app].environment?.MANAGEMENT_HOST, app).toBe('127.0.0.1');
      expect(open.services[app].environment?.MANAGEMENT_HOST, app).toBe('0.0.0.0');
    }
  });

  it('passes promtool check config, rule files included', () => {
    const { ok, output } = promtoolCheck(config().services.prometheus, prometheusConfigText(), scratch);
    expect(output).toContain('SUCCESS');
    expect(ok, output).toBe(true);
  });

  describe('negative controls: the same checks on broken copies', () => {
    const withConfig =
      (change: (c: PrometheusConfig) => void): Read =>
      (path) => {
        const text = readFileSync(path, 'utf8');
        if (path !== prometheusConfigPath(config().services.prometheus)) return text;
        const c = parse(text) as PrometheusConfig;
        change(c);
        return stringify(c);
      };

    it('a target on another port, a missing job, a job of no app fail', () => {
      const problems = observabilityProblems(
        config(),
        withConfig((c) => {
          c.scrape_configs![0].static_configs![0].targets = ['gateway:9001'];
          c.scrape_configs = c.scrape_configs!.filter((j) => j.job_name !== 'agent-pod');
          c.scrape_configs.push({ job_name: 'nats', static_configs: [{ targets: ['nats:8222'] }] });
        }),
      );
      expect(problems).toEqual([
        'prometheus: job nats is no app',
        'gateway: Prometheus scrapes gateway:9001, its management port is gateway:9000',
        'agent-pod: no scrape job',
      ]);
    });

    it("an app's MANAGEMENT_PORT changed in compose but not in the scrape config fails", () => {
      const c = config();
      c.services['message-service'].environment!.MANAGEMENT_PORT = '9110';
      expect(observabilityProblems(c)).toEqual([
        'message-service: Prometheus scrapes message-service:9100, its management port is message-service:9110',
      ]);
    });

    it('rule files from nowhere, rules.yml left out, Prometheus off the apps’ network fail', () => {
      const c = config();
      c.services.prometheus.volumes = c.services.prometheus.volumes!.map((v) =>
        v.replace('prometheus/rules.yml:', 'prometheus/rules.yaml:'),
      );
      c.services.prometheus.networks = { observability: null };
      expect(observabilityProblems(c)).toEqual([
        'prometheus: rule file /etc/prometheus/rules.yml is mounted from no existing file',
        `prometheus: does not load ${RULES}`,
        'gateway: shares no network with prometheus',
        'message-service: shares no network with prometheus',
        'agent-pod: shares no network with prometheus',
      ]);
    });

    it('a profile left out, an unpinned image, provisioning or dashboards from nowhere fail', () => {
      const c = config();
      delete c.services.grafana.profiles;
      c.services.prometheus.image = 'prom/prometheus:latest';
      c.services.grafana.volumes = c.services.grafana.volumes!.map((v) =>
        v.replace('grafana/dashboards:', 'grafana/dashbords:'),
      );
      expect(observabilityProblems(c)).toEqual([
        'prometheus: image prom/prometheus:latest is not pinned',
        'grafana: profiles undefined, expected ["observability"] only',
        'grafana: dashboards provider 0 reads no mounted, existing directory',
        `grafana: no dashboards provider reads ${DASHBOARDS}`,
      ]);
      const noProvisioning = config();
      noProvisioning.services.grafana.volumes = noProvisioning.services.grafana.volumes!.map((v) =>
        v.replace('grafana/provisioning:', 'grafana/provision:'),
      );
      expect(observabilityProblems(noProvisioning)).toEqual([
        'grafana: /etc/grafana/provisioning is mounted from no existing directory',
      ]);
    });

    it('promtool fails a config with a bad interval, and one whose rule file does not parse', () => {
      const prometheus = config().services.prometheus;
      const badInterval = parse(prometheusConfigText()) as { global: Record<string, string> };
      badInterval.global.scrape_interval = '15 seconds';
      expect(promtoolCheck(prometheus, stringify(badInterval), scratch).ok).toBe(false);
      const brokenRules = join(scratch, 'rules.yml');
      writeFileSync(brokenRules, 'groups:\n  - name: x\n    rules:\n      - alert: X\n        expr: rate(\n');
      const withBrokenRules = parse(prometheusConfigText()) as PrometheusConfig;
      withBrokenRules.rule_files = [brokenRules];
      const { ok, output } = promtoolCheck(prometheus, stringify(withBrokenRules), scratch);
      expect(ok).toBe(false);
      expect(output).toContain('FAILED');
    });
  });
});
