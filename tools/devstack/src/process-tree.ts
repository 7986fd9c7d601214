import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The postmaster's pid: the first line of `<dataDir>/postmaster.pid` (undefined when it is not running). */
export function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The pids whose parent is `pid` (from /proc: Linux only). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the command (in parentheses, which may hold spaces): state, then ppid.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // The process ended while the list was read.
    }
  }
  return children;
}

/**
 * Sends `signal` to a PostgreSQL server's postmaster and every process it forked
 * (backends, checkpointer, WAL writer, WAL sender/receiver…). SIGSTOP: the server
 * hangs as a wedged host would (its kernel still accepts TCP and answers
 * keepalives, nothing answers the protocol); SIGCONT: it goes on where it was.
 * The postmaster is stopped first (so it forks nothing new while its children
 * are) and continued last.
 */
export function signalServer(dataDir: string, signal: 'SIGSTOP' | 'SIGCONT'): void {
  const pid = postmasterPid(dataDir);
  if (pid === undefined) throw new Error(`no PostgreSQL is running in ${dataDir}`);
  const tree = [pid, ...childrenOf(pid)];
  const ordered = signal === 'SIGSTOP' ? tree : tree.reverse();
  for (const target of ordered) {
    try {
      process.kill(target, signal);
    } catch {
      // A backend that ended in between.
    }
  }
}
