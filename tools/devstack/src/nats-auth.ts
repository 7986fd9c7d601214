import {
  createAuthority,
  inboxPrefix,
  issueCredentials,
  serverConfig,
  type BusIdentity,
  type IssuedCredentials,
  type NatsAuthority,
} from '@mcpgw/bus';
import { encodeUser, fmtCreds } from '@nats-io/jwt';
import { createUser, fromPublic, fromSeed } from '@nats-io/nkeys';
import { connect, credsAuthenticator, type NatsConnection } from 'nats';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, isListening } from './ports';

/**
 * A nats-server of one's own with NATS auth on (operator mode, a full
 * resolver, JetStream in a temporary store), for a test or `npm start`: a
 * fresh operator and account per run, and credentials files for each app and
 * agent, with the permissions of libs/bus/src/auth. Killed and removed by `stop`.
 */
export interface AuthenticatedNats {
  url: string;
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
   * Kill the server (SIGKILL: no goodbye to its clients), stay down `downMs`,
   * and start it again on the same port with the same store and resolver (a
   * crash and a restart, for fault tests).
   */
  restart(downMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Whether the nats-server binary is on the PATH. */
export function natsServerAvailable(): boolean {
  return spawnSync('nats-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

export async function startAuthenticatedNats(prefix: string): Promise<AuthenticatedNats> {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-nats-'));
  chmodSync(dir, 0o700);
  const authority = await createAuthority();
  const port = await freePort();
  mkdirSync(join(dir, 'resolver'));
  const config = join(dir, 'nats-server.conf');
  writeFileSync(
    config,
    serverConfig({ authority, port, storeDir: join(dir, 'jetstream'), resolverDir: join(dir, 'resolver') }),
    { mode: 0o600 },
  );
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
  let child!: ChildProcess;
  let exited!: Promise<void>;
  const launch = async () => {
    child = spawn('nats-server', ['-c', config], { stdio: 'ignore' });
    exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    await waitListening(port, exited);
  };
  const halt = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  };
  const stop = async () => {
    await halt('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  };
  const restart = async (downMs = 0) => {
    await halt('SIGKILL');
    await new Promise((r) => setTimeout(r, downMs));
    await launch();
  };
  try {
    await launch();
  } catch (error) {
    await stop();
    throw error;
  }
  const issue = (identity: BusIdentity) =>
    issueCredentials({ account: authority.account, signingSeed: authority.accountSigningSeed, prefix, identity });
  const files = new Map<string, Promise<string>>();
  const url = `nats://127.0.0.1:${port}`;
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
      servers: url,
      authenticator: credsAuthenticator(fmtCreds(jwt, user)),
      inboxPrefix: inboxPrefix(prefix, as),
    });
  };
  return {
    connectUnrestricted,
    url,
    dir,
    authority,
    prefix,
    adminEnv,
    issue,
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

async function waitListening(port: number, exited: Promise<void>): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (gone) throw new Error('nats-server exited at start (see its config)');
    if (await isListening('127.0.0.1', port, 200)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`nats-server did not listen on ${port} within 10 s`);
}
