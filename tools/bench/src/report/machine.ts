import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { Client } from 'pg';

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGb: number;
  kernel: string;
  node: string;
  natsServer: string;
  postgresql: string;
}

function command(file: string, args: string[]): string {
  try {
    return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch {
    return 'unknown';
  }
}

async function postgresVersion(): Promise<string> {
  const client = new Client({
    connectionString: process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  });
  try {
    await client.connect();
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    return rows[0].server_version;
  } catch {
    return 'unknown';
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** What the figures were measured on. */
export async function describeMachine(): Promise<Machine> {
  const model =
    /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? 'unknown';
  return {
    cpuModel: model.trim(),
    cores: cpus().length,
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: command('uname', ['-r']),
    node: process.version,
    natsServer: command('nats-server', ['--version']),
    postgresql: await postgresVersion(),
  };
}
