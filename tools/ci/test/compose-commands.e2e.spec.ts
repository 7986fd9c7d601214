import { freePort, isolatedEnvironment, ServiceProcess, workspaceRoot, type Isolation } from '@mcpgw/devstack';
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * docker-compose.yml run without Docker: each service's own command, with the
 * environment compose resolves for it (from .env.example, its secrets replaced), on this machine's
 * PostgreSQL and NATS; then each service's own healthcheck command must pass.
 * Only what cannot hold outside a container is rewritten: the hosts (postgres,
 * nats), this run's database and bus prefix, free ports in place of the
 * fixed ones (in the healthcheck too), and the creds files that nats-auth
 * makes in its volume: NATS auth is on, as in compose, on a nats-server of
 * this run's own with credentials of the same names.
 */
interface ComposeService {
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
}

const root = workspaceRoot();
const APPS = ['message-service', 'gateway', 'agent-pod'] as const;
/** What the Dockerfile's image sets for every command. */
const IMAGE_ENV = { NODE_ENV: 'production' };
const PORT_VARIABLES = ['GATEWAY_PORT', 'MESSAGE_SERVICE_PORT', 'MANAGEMENT_PORT'];

/**
 * .env.example as its readers are told to use it: every secret replaced (the image
 * runs with NODE_ENV=production, which refuses its placeholders).
 */
function replacedEnvFile(): string {
  const lines = readFileSync(join(root, '.env.example'), 'utf8')
    .split('\n')
    .map((line) => line.replace(/replace-me[\w-]*/g, () => randomBytes(36).toString('base64url')));
  const file = join(mkdtempSync(join(tmpdir(), 'compose-env-')), '.env');
  writeFileSync(file, lines.join('\n'));
  return file;
}

function resolvedCompose(): Record<string, ComposeService> | undefined {
  const args = ['-f', join(root, 'docker-compose.yml'), '--env-file', replacedEnvFile(), 'config'];
  const run = spawnSync('docker-compose', args, { cwd: root, encoding: 'utf8' });
  if (run.error) return undefined;
  if (run.status !== 0) throw new Error(`docker-compose config failed: ${run.stderr}`);
  return (parse(run.stdout) as { services: Record<string, ComposeService> }).services;
}

/** The service's environment for a run here, and its healthcheck with the same ports. */
async function localised(service: ComposeService, isolation: Isolation, app?: (typeof APPS)[number]) {
  const env: Record<string, string> = { ...IMAGE_ENV, ...service.environment };
  let healthcheck = service.healthcheck?.test.slice(1) ?? [];
  for (const name of PORT_VARIABLES) {
    if (!env[name]) continue;
    const port = String(await freePort());
    healthcheck = healthcheck.map((part) => part.replaceAll(`127.0.0.1:${env[name]}`, `127.0.0.1:${port}`));
    env[name] = port;
  }
  if (env.DATABASE_URL) env.DATABASE_URL = isolation.databaseUrl;
  env.NATS_URL = isolation.natsUrl;
  env.BUS_PREFIX = isolation.busPrefix;
  if (env.NATS_CREDS) {
    if (!app) throw new Error('only the apps connect to NATS');
    expect(env.NATS_CREDS).toBe(app === 'agent-pod' ? `/auth/agent-${env.AGENT_ID}.creds` : `/auth/${app}.creds`);
    env.NATS_CREDS = await isolation.natsCreds!(app, env.AGENT_ID ?? '');
  }
  return { env, healthcheck };
}

function passes(command: string[], env: Record<string, string>): Promise<boolean> {
  return new Promise((resolve) =>
    execFile(command[0], command.slice(1), { cwd: root, env: { ...process.env, ...env }, timeout: 5_000 }, (error) =>
      resolve(!error),
    ),
  );
}

const services = resolvedCompose();

describe.skipIf(!services && !process.env.CI)("docker-compose.yml's commands, run directly", () => {
  let isolation: Isolation;
  const started: ServiceProcess[] = [];

  beforeAll(async () => {
    if (!services) throw new Error('docker-compose is not installed (.ci/run installs it)');
    isolation = await isolatedEnvironment('compose', { auth: true });
  });

  afterAll(async () => {
    await Promise.all(started.map((process) => process.stop()));
    await isolation?.remove();
  });

  // In compose order (migrate-gateway waits for migrate-messaging), each as its schema's owner role there.
  it.each(['migrate-messaging', 'migrate-gateway'])(
    '%s runs its command to completion',
    async (name) => {
      const migrate = services![name];
      const { env } = await localised(migrate, isolation);
      const [command, ...args] = migrate.command!;
      expect(await passes([command === 'node' ? process.execPath : command, ...args], env)).toBe(true);
    },
    35_000,
  );

  it.each(APPS)(
    '%s starts with its compose environment and passes its healthcheck',
    async (name) => {
      const service = services![name];
      const { env, healthcheck } = await localised(service, isolation, name);
      expect(env.NATS_CREDS).toBeTruthy();
      expect(service.command?.[0]).toBe('node');
      expect(healthcheck.length).toBeGreaterThan(0);
      const process = new ServiceProcess(name, join(root, service.command![1]), env);
      started.push(process);
      await expect
        .poll(async () => process.running && (await passes(healthcheck, env)), { timeout: 30_000, interval: 250 })
        .toBe(true);
      // As long as the poll: the unit project (tools/ci/test/*.spec.ts) runs this file too, with a 5 s default.
    },
    35_000,
  );
});
