import type { ChildProcess } from 'node:child_process';

/** `npm start`'s stderr up to the end of its banner (its last line names Ctrl-C), or why not within `timeoutMs`. */
export function bannerOf(child: ChildProcess, timeoutMs: number): Promise<string> {
  let banner = '';
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within ${timeoutMs / 1000} s:\n${banner}`)), timeoutMs);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      banner += chunk;
      if (banner.includes('Ctrl-C stops everything')) {
        clearTimeout(timer);
        resolve(banner);
      }
    });
    child.once('exit', (code) => reject(new Error(`npm start exited (${code}):\n${banner}`)));
  });
}

/**
 * Stop an `npm start` that a test left running (it failed before stopping it): Ctrl-C first, so
 * the launcher stops the apps, nats-server and Prometheus it started (a SIGKILL would orphan them,
 * and they would load the machine for every test after), then SIGKILL past `graceMs`.
 */
export async function stopLauncher(child: ChildProcess | undefined, graceMs = 20_000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, graceMs))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
