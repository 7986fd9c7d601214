import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * How the admin CLI finds the stack `npm start` runs, with no environment set:
 * `npm start` (tools/devstack/src/bin/start-stack.ts) writes the settings the CLI
 * needs to reach it (its database, its nats-server, the bus prefix, the NATS
 * account's signing material, the grant signing key) to `.data/npm-start.json`
 * (mode 0600; `.data` is where it keeps the grant key too) and removes it when it
 * stops. The CLI fills the settings its environment leaves unset from that file,
 * the way it finds `.data/grant-signing-key.json` by default.
 *
 * Never with NODE_ENV=production: there every setting comes from the environment
 * and nothing under `.data` is assumed. Not when the environment names another
 * database (`DATABASE_URL` set and different): that is another stack. Not when the
 * `npm start` that wrote the file is gone (its `pid`): its nats-server and seeds
 * went with it. `NPM_START_FILE` names another file (a second `npm start` that
 * found the first one's file in use prints it in its commands).
 */
export const NPM_START_FILE = '.data/npm-start.json';

/** The only settings the file may give: where the stack is, and what signs for it. */
export const NPM_START_SETTINGS = [
  'DATABASE_URL',
  'NATS_URL',
  /** The gateway's credentials: `call show` asks the message service as the gateway does. */
  'NATS_CREDS',
  'BUS_PREFIX',
  'GRANT_SIGNING_KEY_FILE',
  'NATS_ACCOUNT_PUBLIC_KEY',
  'NATS_ACCOUNT_SIGNING_SEED_FILE',
  'NATS_OPERATOR_SEED_FILE',
  'NATS_SYSTEM_CREDS',
] as const;

export interface NpmStartFile {
  /** The process id of the `npm start` launcher that wrote it. */
  pid: number;
  env: Partial<Record<(typeof NPM_START_SETTINGS)[number], string>>;
}

/** The settings of the running `npm start`'s stack that `env` leaves unset, and the file they come from. */
export function npmStartDefaults(
  env: NodeJS.ProcessEnv,
  cwd = process.cwd(),
  alive: (pid: number) => boolean = processAlive,
): { file: string; settings: Record<string, string> } | undefined {
  if (env.NODE_ENV === 'production') return undefined;
  const file = resolve(cwd, env.NPM_START_FILE || NPM_START_FILE);
  let parsed: NpmStartFile;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as NpmStartFile;
  } catch {
    return undefined;
  }
  if (!parsed || !Number.isSafeInteger(parsed.pid) || !alive(parsed.pid) || typeof parsed.env !== 'object') {
    return undefined;
  }
  const given = parsed.env ?? {};
  if (env.DATABASE_URL && env.DATABASE_URL !== given.DATABASE_URL) return undefined;
  const settings: Record<string, string> = {};
  for (const name of NPM_START_SETTINGS) {
    const value = given[name];
    if (typeof value === 'string' && value !== '' && !env[name]) settings[name] = value;
  }
  return { file, settings };
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
