import { execFile } from 'node:child_process';

/** Run a node entry point to completion; resolves with stdout, rejects with stderr. */
export function runNode(entry: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [entry, ...args], { env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${entry} ${args.join(' ')} failed: ${stderr || stdout || error.message}`));
      else resolve(stdout);
    });
  });
}
