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
