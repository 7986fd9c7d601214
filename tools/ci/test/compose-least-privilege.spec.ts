import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * docker-compose.yml gives each container the least it needs (issue 22, "a hostile agent
 * cannot make the services act for it"): read off `docker-compose config` (with
 * .env.example), so anchors, merges and defaults are resolved as compose resolves them.
 *
 * - Seeds: the volume nats-init writes its authority into (operator and account signing
 *   seeds, system creds) is mounted by the one-shot nats-auth and the admin tools only.
 * - Credentials: each app mounts one volume, read-only, at its NATS_CREDS directory, that
 *   no other running service mounts; nats mounts none of the apps' volumes.
 * - Networks: the agent pods share no network with PostgreSQL or MinIO, and theirs are
 *   internal (no way out); NATS monitoring is neither enabled nor published.
 * - PostgreSQL: each app and migration connects as a role of its own, never the superuser.
 *
 * Negative controls feed broken copies of the rendered file to the same checks.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

interface Service {
  command?: string[] | string;
  entrypoint?: string[];
  environment?: Record<string, string>;
  volumes?: (string | { type?: string; source?: string; target?: string; read_only?: boolean })[];
  networks?: Record<string, unknown> | string[];
  network_mode?: string;
  ports?: unknown[];
  profiles?: string[];
}
interface Compose {
  services: Record<string, Service>;
  networks?: Record<string, { internal?: boolean } | null>;
  volumes?: Record<string, unknown>;
}

/** The one-shot that makes the NATS authority, and the tools that issue and revoke with its seeds. */
const SEED_HOLDERS = ['nats-auth', 'admin'];
const APPS = ['gateway', 'message-service', 'agent-pod'];
const MONITORING_FLAGS = /^(-m|--http_port|-ms|--https_port)(=|$)/;

function rendered(file: string): Compose | undefined {
  const run = spawnSync('docker-compose', ['-f', file, '--env-file', join(root, '.env.example'), 'config'], {
    cwd: root,
    encoding: 'utf8',
  });
  if (run.error) return undefined;
  if (run.status !== 0) throw new Error(`docker-compose config failed: ${run.stderr}`);
  return parse(run.stdout) as Compose;
}

/** source, target, read-only of each mount (short `src:dst[:mode]` or long syntax). */
function mounts(service: Service): { source: string; target: string; readOnly: boolean }[] {
  return (service.volumes ?? []).map((v) => {
    if (typeof v === 'string') {
      const [source, target, mode] = v.split(':');
      return { source, target: target ?? source, readOnly: mode === 'ro' };
    }
    return { source: v.source ?? '', target: v.target ?? '', readOnly: v.read_only === true };
  });
}

function networksOf(service: Service): string[] {
  if (service.network_mode) return [];
  if (!service.networks) return ['default'];
  return Array.isArray(service.networks) ? service.networks : Object.keys(service.networks);
}

function commandOf(service: Service): string[] {
  const command = service.command ?? [];
  return [...(service.entrypoint ?? []), ...(Array.isArray(command) ? command : command.split(/\s+/))];
}

/** The directory nats-init writes the authority into, in nats-auth's command. */
function authorityDir(service: Service): string | undefined {
  const text = commandOf(service).join(' ');
  return /nats-init\.js\s+(\S+)/.exec(text)?.[1];
}

function leastPrivilegeProblems(compose: Compose): string[] {
  const problems: string[] = [];
  const services = compose.services;
  const running = Object.entries(services).filter(([name]) => name !== 'nats-auth');

  // Seeds: the volume (or host path) nats-auth makes the authority in.
  const init = services['nats-auth'];
  const dir = init && authorityDir(init);
  const seedSources = new Set(
    init && dir
      ? mounts(init)
          .filter((m) => m.target === dir)
          .map((m) => m.source)
      : [],
  );
  if (seedSources.size === 0) problems.push('nats-auth: no volume at the directory nats-init writes to');
  for (const [name, service] of Object.entries(services)) {
    if (SEED_HOLDERS.includes(name)) continue;
    for (const m of mounts(service))
      if (seedSources.has(m.source)) problems.push(`${name}: mounts ${m.source}, which holds the NATS seeds`);
  }
  for (const [name, service] of running) {
    for (const [key, value] of Object.entries(service.environment ?? {}))
      if (
        /^NATS_(OPERATOR_SEED_FILE|ACCOUNT_SIGNING_SEED_FILE|SYSTEM_CREDS)$/.test(key) &&
        !SEED_HOLDERS.includes(name)
      )
        problems.push(`${name}: ${key}=${value}: only ${SEED_HOLDERS.join(' and ')} may hold a seed`);
  }

  // Credentials: each app one read-only volume at its NATS_CREDS directory, its alone.
  const ownVolume = new Map<string, string>();
  for (const app of APPS) {
    const service = services[app];
    const creds = service?.environment?.NATS_CREDS;
    if (!service || !creds) {
      problems.push(`${app}: no NATS_CREDS`);
      continue;
    }
    const all = mounts(service);
    const at = all.filter((m) => m.target === dirname(creds));
    if (all.length !== 1 || at.length !== 1)
      problems.push(`${app}: must mount exactly one volume, at ${dirname(creds)} (its creds); mounts ${all.length}`);
    for (const m of all) {
      if (!m.readOnly) problems.push(`${app}: ${m.source} must be mounted read-only`);
      if (compose.volumes && !(m.source in compose.volumes))
        problems.push(`${app}: ${m.source} is not a named volume of its own`);
      ownVolume.set(m.source, app);
    }
  }
  for (const [name, service] of running) {
    for (const m of mounts(service)) {
      const owner = ownVolume.get(m.source);
      if (owner && owner !== name) problems.push(`${name}: mounts ${m.source}, the creds of ${owner}`);
    }
  }

  // Networks.
  const agent = services['agent-pod'];
  const agentNetworks = agent ? networksOf(agent) : [];
  for (const other of ['postgres', 'minio']) {
    const shared = services[other] ? networksOf(services[other]).filter((n) => agentNetworks.includes(n)) : [];
    if (shared.length) problems.push(`agent-pod: shares network(s) ${shared.join(', ')} with ${other}`);
  }
  for (const network of agentNetworks)
    if (compose.networks?.[network]?.internal !== true)
      problems.push(`agent-pod: network ${network} is not internal (a way out of the compose project)`);
  if (agent?.ports?.length) problems.push('agent-pod: publishes ports');

  // NATS monitoring: not enabled, not published.
  const nats = services.nats;
  if (nats) {
    if (commandOf(nats).some((arg) => MONITORING_FLAGS.test(arg)))
      problems.push(`nats: monitoring enabled (${commandOf(nats).join(' ')})`);
    if (nats.ports?.length) problems.push(`nats: publishes ${JSON.stringify(nats.ports)}`);
  }

  // PostgreSQL: a role per service, never the superuser; the agent pods have none.
  const roles = new Map<string, string>();
  for (const [name, service] of running) {
    const url = service.environment?.DATABASE_URL;
    if (!url) continue;
    const role = decodeURIComponent(new URL(url).username);
    if (role === 'postgres' || role === '') problems.push(`${name}: connects to PostgreSQL as the superuser`);
    if (APPS.includes(name)) {
      const holder = [...roles.entries()].find(([, r]) => r === role)?.[0];
      if (holder) problems.push(`${name}: shares the PostgreSQL role ${role} with ${holder}`);
      roles.set(name, role);
    }
  }
  if (agent?.environment?.DATABASE_URL) problems.push('agent-pod: has a DATABASE_URL');
  return problems;
}

const compose = rendered(join(root, 'docker-compose.yml'));

describe.skipIf(!compose && !process.env.CI)('docker-compose.yml: least privilege', () => {
  const config = (): Compose => {
    if (!compose) throw new Error('docker-compose is not installed (.ci/run installs it)');
    return structuredClone(compose);
  };

  it('holds every rule', () => {
    expect(leastPrivilegeProblems(config())).toEqual([]);
  });

  it('gives the agent pods a network of their own with NATS and the gateway only', () => {
    const c = config();
    const agentNetworks = networksOf(c.services['agent-pod']);
    const reachable = Object.entries(c.services)
      .filter(([name, s]) => name !== 'agent-pod' && networksOf(s).some((n) => agentNetworks.includes(n)))
      .map(([name]) => name)
      .filter((name) => !c.services[name].profiles?.includes('tools'))
      .sort();
    // Prometheus scrapes them on bus, in the observability profile only (docker-compose.yml).
    expect(reachable).toEqual(['gateway', 'message-service', 'nats', 'prometheus']);
    expect(c.services.prometheus.profiles).toEqual(['observability']);
  });

  describe('negative controls: the same checks on broken copies', () => {
    it('the seeds volume mounted into the agent pod fails', () => {
      const c = config();
      c.services['agent-pod'].volumes!.push('natsauth:/auth:ro');
      expect(leastPrivilegeProblems(c)).toEqual(
        expect.arrayContaining([
          'agent-pod: mounts natsauth, which holds the NATS seeds',
          expect.stringContaining('agent-pod: must mount exactly one volume'),
        ]),
      );
    });

    it("the gateway's creds volume mounted into the agent pod fails", () => {
      const c = config();
      c.services['agent-pod'].volumes = ['natscreds-gateway:/auth:ro'];
      expect(leastPrivilegeProblems(c)).toContainEqual(expect.stringContaining('the creds of'));
    });

    it('a seed path in an app environment fails', () => {
      const c = config();
      c.services.gateway.environment!.NATS_ACCOUNT_SIGNING_SEED_FILE = '/auth/account-signing.seed';
      expect(leastPrivilegeProblems(c)).toContainEqual(
        expect.stringContaining('gateway: NATS_ACCOUNT_SIGNING_SEED_FILE'),
      );
    });

    it('the agent pod on the database network, or on a network with a way out, fails', () => {
      const c = config();
      c.services['agent-pod'].networks = { bus: null, db: null, edge: null } as Record<string, unknown>;
      expect(leastPrivilegeProblems(c)).toEqual(
        expect.arrayContaining([
          'agent-pod: shares network(s) db with postgres',
          expect.stringContaining('agent-pod: network edge is not internal'),
        ]),
      );
    });

    it('one flat default network fails', () => {
      const c = config();
      for (const s of Object.values(c.services)) if (!s.network_mode) delete s.networks;
      const problems = leastPrivilegeProblems(c);
      expect(problems).toContainEqual('agent-pod: shares network(s) default with postgres');
      expect(problems).toContainEqual('agent-pod: shares network(s) default with minio');
    });

    it('NATS monitoring enabled or published fails', () => {
      const c = config();
      c.services.nats.command = ['-c', '/auth/nats-server.conf', '-m', '8222'];
      c.services.nats.ports = ['8222:8222'];
      expect(leastPrivilegeProblems(c)).toEqual(
        expect.arrayContaining([
          expect.stringContaining('nats: monitoring enabled'),
          expect.stringContaining('nats: publishes'),
        ]),
      );
    });

    it('the superuser or a shared role in DATABASE_URL fails', () => {
      const c = config();
      c.services['message-service'].environment!.DATABASE_URL = c.services.gateway.environment!.DATABASE_URL;
      c.services['migrate-gateway'].environment!.DATABASE_URL = 'postgres://postgres:postgres@postgres:5432/mcpgw';
      expect(leastPrivilegeProblems(c)).toEqual(
        expect.arrayContaining([
          expect.stringContaining('message-service: shares the PostgreSQL role mcpgw_gateway'),
          'migrate-gateway: connects to PostgreSQL as the superuser',
        ]),
      );
    });
  });
});
