import { inboxPrefix, removeInboxStream, type BusIdentity } from '@mcpgw/bus';
import { connect, type NatsConnection } from 'nats';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensureGrantKeyFile } from './grant-key-file';
import { createDatabase, dropDatabase, withDatabase } from './databases';
import { createMigratedDatabase } from './migrated-template';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './embedded-postgres';
import { signalServer } from './process-tree';
import { startReplicatedPostgres, type ReplicatedPostgres } from './replicated-postgres';
import { freePort } from './ports';
import { startAuthenticatedNats, type AuthenticatedNats } from './nats-auth';
import { Stack, type AppName } from './stack';

export interface TestStackOptions {
  gateways?: number;
  /** Message service replicas (default 1); `messageServiceUrl` is the first's. */
  messageServices?: number;
  /** Mock agent pods (default 1). With 0, the agent is created with the admin CLI, for an agent the test starts itself. */
  pods?: number;
  /** Extra environment for every app (e.g. a short INBOX_ACK_WAIT_MS). */
  env?: Record<string, string>;
  podEnv?: Record<string, string>;
  gatewayEnv?: Record<string, string>;
  /**
   * NATS auth (default on): the stack gets a nats-server of its own (free port,
   * temporary store, killed at stop) and each app its credentials (`NATS_CREDS`).
   * `false`: the shared server at NATS_URL, without credentials.
   */
  auth?: boolean;
  /**
   * With auth: a cluster of this many nats-servers instead of one (3: a JetStream
   * quorum), on loopback ports; every app gets the comma-separated list of their
   * URLs as NATS_URL. Set INBOX_REPLICAS in `env` to replicate the inbox stream.
   */
  natsCluster?: number;
  /**
   * A PostgreSQL server of the stack's own (embedded-postgres, a free port, a temporary
   * data directory) instead of the shared one, so that a test may stop it (`postgres`).
   */
  ownPostgres?: boolean;
  /**
   * A primary and a streaming standby of the stack's own (Debian's binaries, see
   * replicated-postgres.ts): the apps' DATABASE_URL names both hosts with
   * `target_session_attrs=read-write`, so a test may stop the primary and promote
   * the standby (`replicated`). Migrated at start, as with `ownPostgres`.
   */
  replicatedPostgres?: boolean;
  /**
   * With `pods: 0` (an agent served by something else, e.g. an SDK's agent), the
   * agent (`podEnv.AGENT_ID`) is created in this workspace before its API key
   * (default `demo`, the agent pod's own default).
   */
  workspaceId?: string;
}

export interface TestStack {
  stack: Stack;
  /** MCP URLs of the running gateways, for `demo-agent`. */
  gatewayUrls: string[];
  messageServiceUrl: string;
  agentId: string;
  /** A fresh API key for the agent. */
  apiKey: string;
  apiKeyId: string;
  /** The RuntimeGrant signing key the gateways of this stack trust. */
  grantKeyFile: string;
  /** With `auth`: the stack's own nats-server, its authority and credentials. */
  nats?: AuthenticatedNats;
  /** With `ownPostgres`: the stack's own PostgreSQL server, to stop and start again. */
  postgres?: OwnPostgres;
  /** With `replicatedPostgres`: the primary, the standby, `promote()`. */
  replicated?: ReplicatedPostgres;
  /** A NATS connection for a test that plays every part (unrestricted; see `AuthenticatedNats`), asking as `as`. */
  connectNats(as?: BusIdentity): Promise<NatsConnection>;
  mcpUrl(gateway?: number, agentId?: string): string;
  /**
   * Another agent on the running stack, created with the admin CLI (in workspace `demo` unless
   * told), and an API key for it: for an agent the test serves itself, beside the stack's own.
   */
  addAgent(agentId: string, workspaceId?: string): Promise<{ apiKey: string; apiKeyId: string }>;
  stop(): Promise<void>;
}

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** A PostgreSQL server a test may stop and start again (its data kept). */
export interface OwnPostgres {
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP the server and every backend (a hung database: connections hang, none fails). */
  pause(): void;
  /** SIGCONT: the paused server goes on. */
  resume(): void;
}

/** An embedded PostgreSQL in a temporary directory on a free port; `remove` deletes it. */
async function ownPostgres(): Promise<OwnPostgres & { adminUrl: string; remove(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-pg-'));
  const port = await freePort();
  let running: EmbeddedPostgresHandle | undefined = await startEmbeddedPostgres(dir, port);
  const stop = async () => {
    await running?.stop();
    running = undefined;
  };
  let paused = false;
  const resume = () => {
    if (paused) signalServer(dir, 'SIGCONT');
    paused = false;
  };
  return {
    port,
    adminUrl: running.url,
    pause: () => {
      signalServer(dir, 'SIGSTOP');
      paused = true;
    },
    resume,
    stop: async () => {
      resume();
      await stop();
    },
    start: async () => {
      running ??= await startEmbeddedPostgres(dir, port);
    },
    remove: async () => {
      resume();
      await stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Isolation {
  databaseUrl: string;
  /** The database is migrated already (asked for with `migrated`, on the shared server). */
  migrated: boolean;
  natsUrl: string;
  busPrefix: string;
  /** A RuntimeGrant signing key of this run's own (GRANT_SIGNING_KEY_FILE). */
  grantKeyFile: string;
  /** With `auth`: a nats-server (or cluster) of this run's own, with NATS auth on. */
  nats?: AuthenticatedNats;
  /** With `ownPostgres`: the PostgreSQL server of this run's own (its database is `databaseUrl`'s). */
  postgres?: OwnPostgres;
  /** With `replicatedPostgres`: the primary and standby of this run's own (`databaseUrl` names both). */
  replicated?: ReplicatedPostgres;
  /** The creds file of each app (with `auth`). */
  natsCreds?: (app: AppName, agentId: string) => Promise<string>;
  /**
   * A NATS connection for a test that plays every part (unrestricted with `auth`).
   * Its requests are answered as `as`'s (the gateway's by default): services answer
   * only in the asker's own reply inbox.
   */
  connectNats(as?: BusIdentity): Promise<NatsConnection>;
  /** Drop the database and the bus prefix's stream (or stop the own nats-server). */
  remove(): Promise<void>;
}

/**
 * A database and a bus prefix of one's own on the real servers, so that test
 * runs (and files within a run) cannot collide, and (by default) a nats-server
 * of one's own with NATS auth on. Migrate it with `Stack.migrate` (or ask for
 * it `migrated`: a copy of a migrated template, migrated-template.ts); a `Stack`
 * made from it (`new Stack(isolation)`) gives each app its credentials.
 */
export async function isolatedEnvironment(
  label = 'run',
  options: {
    auth?: boolean;
    natsNodes?: number;
    ownPostgres?: boolean;
    replicatedPostgres?: boolean;
    migrated?: boolean;
  } = {},
): Promise<Isolation> {
  const tag = `${label}_${process.pid}_${Date.now().toString(36)}_${process.env.VITEST_POOL_ID ?? '0'}`;
  const database = `mcpgw_test_${tag}`;
  const busPrefix = `test_${tag}`;
  if (options.ownPostgres && options.replicatedPostgres) throw new Error('ownPostgres or replicatedPostgres, not both');
  const postgres = options.ownPostgres ? await ownPostgres() : undefined;
  const replicated = options.replicatedPostgres ? await startReplicatedPostgres() : undefined;
  const adminUrl = postgres?.adminUrl ?? replicated?.adminUrl ?? ADMIN_URL;
  // A copy of the shared server's migrated template; an own PostgreSQL has none (Stack.migrate, then).
  const migrated = Boolean(options.migrated && !postgres && !replicated);
  if (migrated) await createMigratedDatabase(adminUrl, database);
  else await createDatabase(adminUrl, database);
  const grantKeyFile = await ensureGrantKeyFile(join(tmpdir(), `mcpgw-${tag}`, 'grant-signing-key.json'));
  if (options.natsNodes && options.auth === false) throw new Error('a NATS cluster of its own comes with auth on');
  const nats =
    (options.auth ?? true) ? await startAuthenticatedNats(busPrefix, { nodes: options.natsNodes }) : undefined;
  return {
    databaseUrl: withDatabase(replicated?.url ?? adminUrl, database),
    migrated,
    natsUrl: nats?.url ?? NATS_URL,
    busPrefix,
    grantKeyFile,
    nats,
    postgres,
    replicated,
    natsCreds:
      nats && ((app, agentId) => nats.credsFile(app === 'agent-pod' ? { role: 'agent', agentId } : { role: app })),
    connectNats: (as: BusIdentity = { role: 'gateway' }) =>
      nats ? nats.connectUnrestricted(as) : connect({ servers: NATS_URL, inboxPrefix: inboxPrefix(busPrefix, as) }),
    remove: async () => {
      rmSync(dirname(grantKeyFile), { recursive: true, force: true });
      if (postgres) await postgres.remove();
      else if (replicated) await replicated.remove();
      else await dropDatabase(ADMIN_URL, database).catch(() => undefined);
      if (nats) await nats.stop();
      else await removeInboxStream(NATS_URL, busPrefix);
    },
  };
}

/**
 * A whole stack for one test file against the real PostgreSQL and NATS, isolated
 * by its own database and its own bus prefix, and removed afterwards.
 */
export async function startTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  const isolation = await isolatedEnvironment('stack', {
    auth: options.auth,
    natsNodes: options.natsCluster,
    ownPostgres: options.ownPostgres,
    replicatedPostgres: options.replicatedPostgres,
    migrated: true,
  });
  const stack = new Stack({
    databaseUrl: isolation.databaseUrl,
    natsUrl: isolation.natsUrl,
    busPrefix: isolation.busPrefix,
    echoLogs: process.env.STACK_LOGS === '1',
    natsCreds: isolation.natsCreds,
    env: {
      LOG_LEVEL: 'info',
      DATABASE_POOL_SIZE: '5',
      GRANT_SIGNING_KEY_FILE: isolation.grantKeyFile,
      ...isolation.nats?.adminEnv,
      ...options.env,
    },
  });
  const cleanup = async () => {
    await stack.stop();
    await isolation.remove();
  };
  try {
    if (!isolation.migrated) await stack.migrate();
    // The gateways beside the message services (neither waits for the other, only for the
    // database and NATS), then the pods, which register with a gateway: about a second less per
    // stack. The first message service makes the inbox stream; the others come once it is there
    // (started together on a 3-node cluster, they make it in 6 s, not 1: libs/bus/README.md).
    const times = (n: number) => Array.from({ length: n }, (_, i) => i);
    const messageServices = async () => {
      const first = await stack.startMessageService();
      await Promise.all(times((options.messageServices ?? 1) - 1).map(() => stack.startMessageService()));
      return first;
    };
    const [ms, gateways] = await Promise.all([
      messageServices(),
      Promise.all(times(options.gateways ?? 1).map(() => stack.startGateway(options.gatewayEnv))),
    ]);
    const gatewayUrls = gateways.map((gateway) => gateway.url);
    await Promise.all(
      times(options.pods ?? 1).map((i) => stack.startPod({ POD_ID: `pod-${i + 1}`, ...options.podEnv })),
    );
    const agentId = options.podEnv?.AGENT_ID ?? 'demo-agent';
    const apiKeyFor = async (agent: string) => {
      const { id, key } = await stack.admin<{ id: string; key: string }>('apikey', 'create', '--agent', agent);
      return { apiKey: key, apiKeyId: id };
    };
    const addAgent = async (agent: string, workspaceId = 'demo') => {
      await stack.admin('agent', 'create', '--id', agent, '--workspace', workspaceId);
      return apiKeyFor(agent);
    };
    const key = options.pods === 0 ? await addAgent(agentId, options.workspaceId) : await apiKeyFor(agentId);
    return {
      stack,
      gatewayUrls,
      messageServiceUrl: ms.url,
      agentId,
      ...key,
      grantKeyFile: isolation.grantKeyFile,
      nats: isolation.nats,
      postgres: isolation.postgres,
      replicated: isolation.replicated,
      connectNats: isolation.connectNats,
      mcpUrl: (gateway = 0, agent = agentId) => `${gatewayUrls[gateway]}/${agent}/mcp`,
      addAgent,
      stop: cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
