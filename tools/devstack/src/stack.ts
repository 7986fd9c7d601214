import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runNode } from './one-shot';
import { freePort } from './ports';
import { ServiceProcess } from './service-process';

export interface StackSettings {
  databaseUrl: string;
  natsUrl: string;
  busPrefix: string;
  /** Print the apps' logs as they come (the launcher does; tests don't). */
  echoLogs?: boolean;
  /** Extra environment for every app. */
  env?: Record<string, string>;
  /** NATS auth on: the creds file of each app (`NATS_CREDS`); a pod's is its agent's. */
  natsCreds?: (app: AppName, agentId: string) => Promise<string>;
}

export type AppName = 'gateway' | 'message-service' | 'agent-pod';

const WORKSPACE_NAME = 'mcp-agent-gateway';

/** The repository root: the nearest folder up from here whose package.json is the workspace's. */
export function workspaceRoot(from = process.cwd()): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === WORKSPACE_NAME) return dir;
    if (dirname(dir) === dir) throw new Error(`not inside the ${WORKSPACE_NAME} workspace: ${from}`);
  }
}

function appDir(app: AppName): string {
  return join(workspaceRoot(), 'apps', app);
}

/** An entry point of a built app (`npm run build` first). */
export function appEntry(app: AppName, file = 'main.js'): string {
  return join(appDir(app), 'dist', file);
}

/**
 * The three apps as processes on one machine, sharing a database and a bus
 * prefix. The local launcher and the integration tests both start the stack
 * through this class, so the tests run what users run.
 */
export class Stack {
  readonly processes: ServiceProcess[] = [];
  /** The message services' REST mirror token (tests call the mirror with it). */
  readonly messageServiceToken = randomBytes(24).toString('base64url');
  /** How many processes of each app were started (names count on). */
  private readonly started = new Map<AppName, number>();
  /** The order in which each process's start was called: `processes` keeps it. */
  private readonly calledAs = new Map<string, number>();

  constructor(readonly settings: StackSettings & { nats?: { adminEnv: Record<string, string> } }) {}

  private env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      DATABASE_URL: this.settings.databaseUrl,
      NATS_URL: this.settings.natsUrl,
      BUS_PREFIX: this.settings.busPrefix,
      ...this.settings.nats?.adminEnv,
      ...this.settings.env,
      ...extra,
    };
  }

  /** Both services' migrations, one after the other (each takes its own advisory lock). */
  async migrate(): Promise<void> {
    await runNode(appEntry('message-service', 'migrate.js'), [], this.env());
    await runNode(appEntry('gateway', 'migrate.js'), [], this.env());
  }

  /** `npm run admin -- …` against this stack's database, parsed from --json. */
  async admin<T = unknown>(...args: string[]): Promise<T> {
    return this.adminWith<T>({}, ...args);
  }

  /** The same, with some of the environment changed (e.g. a rotated key). */
  async adminWith<T = unknown>(env: Record<string, string>, ...args: string[]): Promise<T> {
    // As an operator runs it: with the gateway's environment, its NATS credentials too (`call show`).
    const creds: Record<string, string> = this.settings.natsCreds
      ? { NATS_CREDS: await this.settings.natsCreds('gateway', '') }
      : {};
    const out = await runNode(
      appEntry('gateway', 'admin/main.js'),
      [...args, '--json'],
      this.env({ ...creds, ...env }),
    );
    return JSON.parse(out) as T;
  }

  /**
   * `npm run admin -- …` as typed (no --json added), for commands whose output is
   * not one JSON document (`audit export`) or whose exit code is the answer
   * (`audit verify`): its exit code and output.
   */
  async adminRun(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const creds: Record<string, string> = this.settings.natsCreds
      ? { NATS_CREDS: await this.settings.natsCreds('gateway', '') }
      : {};
    const env = { ...process.env, ...this.env(creds) };
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [appEntry('gateway', 'admin/main.js'), ...args],
        { env, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  async startMessageService(env: Record<string, string> = {}): Promise<{ process: ServiceProcess; url: string }> {
    const name = this.nameFor('message-service');
    const port = Number(env.MESSAGE_SERVICE_PORT ?? (await freePort()));
    const proc = await this.spawn('message-service', name, {
      MESSAGE_SERVICE_PORT: String(port),
      MESSAGE_SERVICE_TOKEN: this.messageServiceToken,
      ...env,
    });
    proc.url = `http://127.0.0.1:${port}`;
    await proc.ready();
    return { process: proc, url: proc.url };
  }

  async startGateway(env: Record<string, string> = {}): Promise<{ process: ServiceProcess; url: string }> {
    const name = this.nameFor('gateway');
    const port = Number(env.GATEWAY_PORT ?? (await freePort()));
    const proc = await this.spawn('gateway', name, { GATEWAY_PORT: String(port), ...env });
    proc.url = `http://127.0.0.1:${port}`;
    await proc.ready();
    return { process: proc, url: proc.url };
  }

  /** A pod of the agent; resolves once it consumes its inbox and its skills are registered. */
  async startPod(env: Record<string, string> = {}): Promise<ServiceProcess> {
    const proc = await this.spawn('agent-pod', this.nameFor('agent-pod'), env);
    await proc.ready();
    return proc;
  }

  /** The running process that serves this URL (e.g. a gateway of `gatewayUrls`). */
  serving(url: string): ServiceProcess {
    const proc = this.processes.find((p) => p.running && p.url === url);
    if (!proc) throw new Error(`no running process serves ${url}`);
    return proc;
  }

  async stop(): Promise<void> {
    await Promise.all(this.processes.map((p) => p.stop()));
  }

  /** The management port of an app at `url` (a gateway of `gatewayUrls`, a message service). */
  managementUrlOf(url: string): string {
    return this.serving(url).managementUrl!;
  }

  /**
   * The next name of an app's process (`gateway-1`, `gateway-2`, …), taken when its start is
   * called, so that processes started together are named, and listed in `processes`, in the
   * order they were asked for (tests pick the third pod by its place).
   */
  private nameFor(app: AppName): string {
    const n = (this.started.get(app) ?? 0) + 1;
    this.started.set(app, n);
    const name = `${app}-${n}`;
    this.calledAs.set(name, this.calledAs.size);
    return name;
  }

  private async spawn(app: AppName, name: string, env: Record<string, string>): Promise<ServiceProcess> {
    const managementPort = Number(env.MANAGEMENT_PORT ?? (await freePort()));
    const agentId = env.AGENT_ID ?? this.settings.env?.AGENT_ID ?? 'demo-agent';
    const creds: Record<string, string> = this.settings.natsCreds
      ? { NATS_CREDS: await this.settings.natsCreds(app, agentId) }
      : {};
    const proc = new ServiceProcess(
      name,
      appEntry(app),
      this.env({ SERVICE_INSTANCE: name, MANAGEMENT_PORT: String(managementPort), ...creds, ...env }),
      this.settings.echoLogs,
    );
    proc.managementUrl = `http://127.0.0.1:${managementPort}`;
    this.processes.push(proc);
    const order = (p: ServiceProcess) => this.calledAs.get(p.name) ?? 0;
    this.processes.sort((a, b) => order(a) - order(b));
    return proc;
  }
}
