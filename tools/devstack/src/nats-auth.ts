import {
  createAuthority,
  inboxPrefix,
  issueCredentials,
  natsServers,
  serverConfig,
  type BusIdentity,
  type IssuedCredentials,
  type NatsAuthority,
} from '@mcpgw/bus';
import { encodeUser, fmtCreds } from '@nats-io/jwt';
import { createUser, fromPublic, fromSeed } from '@nats-io/nkeys';
import { connect, credsAuthenticator, type NatsConnection } from 'nats';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NatsNode } from './nats-node';
import { freePort } from './ports';

/**
 * A nats-server of one's own with NATS auth on (operator mode, a full
 * resolver, JetStream in a temporary store), for a test or `npm start`: a
 * fresh operator and account per run, and credentials files for each app and
 * agent, with the permissions of libs/bus/src/auth. Or a cluster of such
 * servers on loopback (`nodes: 3`): each with its own port, route port, store
 * and resolver directory, the same authority. Killed and removed by `stop`.
 */
export interface AuthenticatedNats {
  /** The server's URL; for a cluster, every node's, comma-separated (as NATS_URL takes them). */
  url: string;
  /** The servers (one, or the cluster's nodes `n1`, `n2`…), to kill and start one by one. */
  nodes: NatsNode[];
  /** Where the config, the resolver, the store and every secret file live (mode 0700). */
  dir: string;
  authority: NatsAuthority;
  prefix: string;
  /** The path of a creds file for this identity (issued once per identity). */
  credsFile(identity: BusIdentity): Promise<string>;
  /** Fresh credentials (a new user) for an identity, not written anywhere. */
  issue(identity: BusIdentity): Promise<IssuedCredentials>;
  /**
   * Environment for tools that issue and revoke credentials (the admin CLI):
   * NATS_ACCOUNT_PUBLIC_KEY, NATS_ACCOUNT_SIGNING_SEED_FILE, NATS_OPERATOR_SEED_FILE, NATS_SYSTEM_CREDS.
   */
  adminEnv: Record<string, string>;
  /**
   * A connection for a test that plays every part (a fake pod, a rogue
   * publisher, the stream's janitor): a user of the account with no
   * permission limits. Never issued outside tests. Its requests are answered
   * as `as`'s (its reply inbox is that identity's; the gateway's by default):
   * the services answer nowhere else.
   */
  connectUnrestricted(as?: BusIdentity): Promise<NatsConnection>;
  /**
   * A connection on fresh credentials of `identity` (its permissions, as an app
   * or a pod of that identity gets them; a hostile agent in tests), its reply
   * inbox that identity's, and no reconnects (a refusal shows at once).
   */
  connectAs(identity: BusIdentity): Promise<NatsConnection>;
  /**
   * Kill every server (SIGKILL: no goodbye to its clients), stay down `downMs`,
   * and start them again on the same ports with the same stores and resolvers
   * (a crash and a restart, for fault tests).
   */
  restart(downMs?: number): Promise<void>;
  /** The node whose `server_name` this is (a stream's `cluster.leader`). */
  node(name: string): NatsNode;
  stop(): Promise<void>;
}

/** Whether the nats-server binary is on the PATH. */
export function natsServerAvailable(): boolean {
  return spawnSync('nats-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

export interface AuthenticatedNatsOptions {
  /** Servers: 1 (default) a single server; 3 a JetStream cluster (routes between them, an R3 quorum). */
  nodes?: number;
}

/** How long a new cluster may take to elect its JetStream meta leader. */
const CLUSTER_READY_MS = 30_000;

export async function startAuthenticatedNats(
  prefix: string,
  options: AuthenticatedNatsOptions = {},
): Promise<AuthenticatedNats> {
  const count = options.nodes ?? 1;
  if (!Number.isInteger(count) || count < 1) throw new Error(`nodes must be 1 or more, not ${count}`);
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-nats-'));
  chmodSync(dir, 0o700);
  const authority = await createAuthority();
  const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
  const routePorts = count > 1 ? await Promise.all(Array.from({ length: count }, () => freePort())) : [];
  const nodes = ports.map((port, i) => {
    const name = `n${i + 1}`;
    // A single server keeps the layout it always had: its files straight in `dir`.
    const home = count > 1 ? join(dir, name) : dir;
    mkdirSync(join(home, 'resolver'), { recursive: true });
    const config = join(home, 'nats-server.conf');
    writeFileSync(
      config,
      serverConfig({
        authority,
        port,
        storeDir: join(home, 'jetstream'),
        resolverDir: join(home, 'resolver'),
        ...(count > 1
          ? {
              serverName: name,
              cluster: {
                name: 'mcpgw-dev',
                port: routePorts[i],
                routes: routePorts.filter((_, j) => j !== i).map((p) => `nats-route://127.0.0.1:${p}`),
              },
            }
          : {}),
      }),
      { mode: 0o600 },
    );
    return new NatsNode(name, port, config);
  });
  const secret = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  };
  const adminEnv = {
    NATS_ACCOUNT_PUBLIC_KEY: authority.account,
    NATS_ACCOUNT_SIGNING_SEED_FILE: secret('account-signing.seed', authority.accountSigningSeed),
    NATS_OPERATOR_SEED_FILE: secret('operator.seed', authority.operatorSeed),
    NATS_SYSTEM_CREDS: secret('system.creds', authority.systemCreds),
  };
  const url = nodes.map((node) => node.url).join(',');
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  const restart = async (downMs = 0) => {
    await Promise.all(nodes.map((node) => node.kill()));
    await new Promise((r) => setTimeout(r, downMs));
    await Promise.all(nodes.map((node) => node.start()));
  };
  const issue = (identity: BusIdentity) =>
    issueCredentials({ account: authority.account, signingSeed: authority.accountSigningSeed, prefix, identity });
  const files = new Map<string, Promise<string>>();
  const connectUnrestricted = async (as: BusIdentity = { role: 'gateway' }) => {
    const user = createUser();
    const jwt = await encodeUser(
      'test-unrestricted',
      user,
      fromPublic(authority.account),
      {},
      {
        signer: fromSeed(new TextEncoder().encode(authority.accountSigningSeed)),
      },
    );
    return connect({
      servers: natsServers(url),
      authenticator: credsAuthenticator(fmtCreds(jwt, user)),
      inboxPrefix: inboxPrefix(prefix, as),
    });
  };
  try {
    await Promise.all(nodes.map((node) => node.start()));
    if (count > 1) await jetStreamReady(connectUnrestricted);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    connectUnrestricted,
    url,
    nodes,
    node: (name) => {
      const found = nodes.find((node) => node.name === name);
      if (!found) throw new Error(`no NATS node named ${name}`);
      return found;
    },
    dir,
    authority,
    prefix,
    adminEnv,
    issue,
    connectAs: async (identity) =>
      connect({
        servers: natsServers(url),
        authenticator: credsAuthenticator(new TextEncoder().encode((await issue(identity)).creds)),
        inboxPrefix: inboxPrefix(prefix, identity),
        maxReconnectAttempts: 0,
      }),
    credsFile: (identity) => {
      const name = identity.role === 'agent' ? `agent-${identity.agentId}` : identity.role;
      let file = files.get(name);
      if (!file) {
        file = issue(identity).then((issued) => secret(`${name}.creds`, issued.creds));
        files.set(name, file);
      }
      return file;
    },
    restart,
    stop,
  };
}

/** A cluster answers JetStream API requests once its nodes have elected a meta leader. */
async function jetStreamReady(connectUnrestricted: () => Promise<NatsConnection>): Promise<void> {
  const nc = await connectUnrestricted();
  try {
    const deadline = Date.now() + CLUSTER_READY_MS;
    for (;;) {
      try {
        const jsm = await nc.jetstreamManager({ timeout: 1_000, checkAPI: false });
        await jsm.getAccountInfo();
        return;
      } catch (error) {
        if (Date.now() > deadline)
          throw new Error(`the NATS cluster has no JetStream after 30 s: ${(error as Error).message}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  } finally {
    await nc.close();
  }
}
