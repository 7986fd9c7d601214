import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * deploy/compose/postgres-standby.yml (issue 45: a primary and a standby, as an example): with
 * docker-compose.yml it renders (`docker-compose config`, .env.example), adds a standby that
 * copies and streams from `postgres`, lets it replicate (the init script), and points every
 * service that has a DATABASE_URL at both servers, libpq's way, asking for the one that takes
 * writes, still under its own role. There is no Docker engine here: what runs it is the
 * failover test (apps/gateway/test/database-outage.e2e.spec.ts) on real servers.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

interface Service {
  command?: string[] | string;
  environment?: Record<string, string>;
  volumes?: (string | { source?: string; target?: string })[];
}

function rendered(files: string[]): { services: Record<string, Service> } | undefined {
  const run = spawnSync(
    'docker-compose',
    [...files.flatMap((f) => ['-f', join(root, f)]), '--env-file', join(root, '.env.example'), 'config'],
    { cwd: root, encoding: 'utf8' },
  );
  if (run.error) return undefined;
  if (run.status !== 0) throw new Error(`docker-compose config failed: ${run.stderr}`);
  return parse(run.stdout) as { services: Record<string, Service> };
}

const BOTH =
  /^postgres:\/\/([^:@]+):[^@]+@postgres:5432,postgres-standby:5432\/mcpgw\?target_session_attrs=read-write$/;

const ha = rendered(['docker-compose.yml', 'deploy/compose/postgres-standby.yml']);

describe.skipIf(!ha && !process.env.CI)('deploy/compose/postgres-standby.yml', () => {
  const services = () => {
    if (!ha) throw new Error('docker-compose is not installed (.ci/run installs it)');
    return ha.services;
  };

  it('adds a standby made by pg_basebackup -R from postgres, and lets postgres stream to it', () => {
    const standby = services()['postgres-standby'];
    const command = [standby.command ?? []].flat().join(' ');
    expect(command).toMatch(/pg_basebackup -h postgres -U postgres -D \/var\/lib\/postgresql\/data -R -X stream/);
    const mounts = (services().postgres.volumes ?? []).map((v) =>
      typeof v === 'string' ? v : `${v.source}:${v.target}`,
    );
    expect(mounts.some((m) => /postgres-replication\.sh:\/docker-entrypoint-initdb\.d\//.test(m))).toBe(true);
  });

  it('points every service with a database at both servers, read-write, each under its own role', () => {
    const urls = Object.entries(services())
      .filter(([, s]) => s.environment?.DATABASE_URL)
      .map(([name, s]) => [name, s.environment!.DATABASE_URL] as const);
    expect(urls.map(([name]) => name).sort()).toEqual(
      ['admin', 'gateway', 'message-service', 'migrate-gateway', 'migrate-messaging', 'nats-record'].sort(),
    );
    for (const [name, url] of urls) {
      const role = BOTH.exec(url)?.[1];
      expect({ name, role: role ?? url }).toEqual({ name, role: expect.stringMatching(/^mcpgw_/) });
    }
  });
});
