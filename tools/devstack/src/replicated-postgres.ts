import { execFile } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freePort } from './ports';
import { signalServer } from './process-tree';

const run = promisify(execFile);

/** One server of the pair: its own port and data directory. */
export interface PostgresServer {
  port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication on loopback). */
  url: string;
  dataDir: string;
  /** `pg_ctl stop`: `fast` (the default) ends sessions cleanly; `immediate` is a crash. A paused server is resumed first. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** `pg_ctl start`, when it is stopped; waits until it accepts connections. */
  start(): Promise<void>;
  /** SIGSTOP the postmaster and every backend: connections hang, none fails. */
  pause(): void;
  /** SIGCONT: the paused server goes on. */
  resume(): void;
}

/** A primary and its streaming standby on this machine, for failover tests. */
export interface ReplicatedPostgres {
  primary: PostgresServer;
  standby: PostgresServer;
  /** Both hosts, primary first, `target_session_attrs=read-write`: whichever accepts writes serves. */
  url: string;
  /** The first primary's URL (database `postgres`), for CREATE DATABASE and the like before a failover. */
  adminUrl: string;
  /**
   * Until the standby has replayed everything the primary has written so far. The
   * replication is asynchronous (as a managed database's standby often is): a
   * primary stopped before this may take its last commits with it.
   */
  caughtUp(): Promise<void>;
  /** `pg_ctl promote` on the standby; resolves when it accepts writes. */
  promote(): Promise<void>;
  /** Stops both servers and deletes their data. */
  remove(): Promise<void>;
}

/** The newest Debian PostgreSQL (`/usr/lib/postgresql/<major>/bin`), which has pg_basebackup. */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, 'bin', 'pg_basebackup')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) throw new Error(`no PostgreSQL binaries under ${root} (apt-get install postgresql)`);
  return join(root, versions[0], 'bin');
}

/** The uid and gid to run PostgreSQL as: `postgres` when this process is root (PostgreSQL refuses root). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  if (!line) throw new Error('running as root, and there is no postgres user to run PostgreSQL as');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * Starts a primary (initdb, `wal_level=replica`, trust on loopback for sessions
 * and replication) and a standby made with `pg_basebackup -R` (standby.signal and
 * primary_conninfo), each on a free port, in one temporary directory. Runs the
 * Debian binaries as the `postgres` user when this is root. On any failure the
 * servers started so far are stopped and the directory deleted.
 */
export async function startReplicatedPostgres(): Promise<ReplicatedPostgres> {
  const bin = postgresBinDir();
  const user = serverUser();
  const base = mkdtempSync(join(tmpdir(), 'mcpgw-pgrepl-'));
  if (user) chownSync(base, user.uid, user.gid);
  const tool = (name: string, args: string[]) =>
    run(join(bin, name), args, { ...user, cwd: base, env: { ...process.env, PGUSER: 'postgres' } });
  const servers: PostgresServer[] = [];
  const remove = async () => {
    for (const server of servers) await server.stop('immediate').catch(() => undefined);
    rmSync(base, { recursive: true, force: true });
  };
  try {
    const primary = server(join(base, 'primary'), await freePort(), tool);
    servers.push(primary);
    await tool('initdb', ['-D', primary.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    appendFileSync(primary.dataDir + '/postgresql.conf', settings(primary.port, base));
    appendFileSync(primary.dataDir + '/pg_hba.conf', 'host replication all 127.0.0.1/32 trust\n');
    await primary.start();

    const standby = server(join(base, 'standby'), await freePort(), tool);
    servers.push(standby);
    await tool('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-D',
      standby.dataDir,
      '-R',
      '--checkpoint=fast',
    ]);
    appendFileSync(standby.dataDir + '/postgresql.conf', `port = ${standby.port}\n`);
    await standby.start();

    return {
      primary,
      standby,
      url: `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/postgres?target_session_attrs=read-write`,
      adminUrl: primary.url,
      caughtUp: () => caughtUp(primary.url, standby.url),
      promote: async () => {
        await tool('pg_ctl', ['promote', '-w', '-D', standby.dataDir]);
        await untilWritable(standby.url);
      },
      remove,
    };
  } catch (error) {
    await remove();
    throw error;
  }
}

/** The primary's settings (the standby inherits them through pg_basebackup, its port aside). */
function settings(port: number, socketDir: string): string {
  return [
    `port = ${port}`,
    `listen_addresses = '127.0.0.1'`,
    `unix_socket_directories = '${socketDir}'`,
    'wal_level = replica',
    'max_wal_senders = 5',
    `wal_keep_size = '128MB'`,
    'hot_standby = on',
    // A test server: crash safety is not what is tested, speed is welcome.
    'fsync = off',
    'full_page_writes = off',
    '',
  ].join('\n');
}

type Tool = (name: string, args: string[]) => Promise<unknown>;

function server(dataDir: string, port: number, tool: Tool): PostgresServer {
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let paused = false;
  const self: PostgresServer = {
    port,
    url,
    dataDir,
    start: async () => {
      if (existsSync(join(dataDir, 'postmaster.pid'))) return;
      await tool('pg_ctl', ['start', '-w', '-t', '60', '-D', dataDir, '-l', `${dataDir}.log`]);
      await untilAnswers(url);
    },
    stop: async (mode = 'fast') => {
      if (paused) self.resume();
      if (!existsSync(join(dataDir, 'postmaster.pid'))) return;
      await tool('pg_ctl', ['stop', '-w', '-t', '60', '-m', mode, '-D', dataDir]);
    },
    pause: () => {
      signalServer(dataDir, 'SIGSTOP');
      paused = true;
    },
    resume: () => {
      signalServer(dataDir, 'SIGCONT');
      paused = false;
    },
  };
  return self;
}

/** Until a connection to `url` runs a statement (30 s at most). */
async function untilAnswers(url: string): Promise<void> {
  await until(url, async () => true);
}

/** Until the server at `url` accepts writes (a promoted standby). */
async function untilWritable(url: string): Promise<void> {
  await until(url, async (client) => {
    const { rows } = await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
    return rows[0]?.transaction_read_only === 'off';
  });
}

async function caughtUp(primaryUrl: string, standbyUrl: string): Promise<void> {
  const primary = new Client({ connectionString: primaryUrl });
  await primary.connect();
  try {
    const { rows } = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
    await until(standbyUrl, async (standby) => {
      const replayed = await standby.query<{ behind: boolean }>(
        'SELECT pg_last_wal_replay_lsn() < $1::pg_lsn AS behind',
        [rows[0].lsn],
      );
      return replayed.rows[0]?.behind === false;
    });
  } finally {
    await primary.end();
  }
}

async function until(url: string, ready: (client: Client) => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      if (await ready(client)) return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    } finally {
      await client.end().catch(() => undefined);
    }
    if (Date.now() > deadline) throw new Error(`${url} did not get ready in 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
