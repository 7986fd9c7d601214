import { spawn, type ChildProcess } from 'node:child_process';
import { isListening } from '@mcpgw/devstack';
import { processTable, readStat, withDescendants } from '../proc/proc-table';

/** A process the bench starts for a system (a server, a proxy), and stops with its descendants. */
export class ChildService {
  private readonly child: ChildProcess;
  private stderr = '';

  constructor(
    readonly name: string,
    command: string,
    args: string[],
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
    this.child
      .stderr!.setEncoding('utf8')
      .on('data', (chunk: string) => (this.stderr = (this.stderr + chunk).slice(-4_000)));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Resolves once it accepts TCP connections on 127.0.0.1:port. */
  async listening(port: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null) throw new Error(`${this.name} exited (${this.child.exitCode}): ${this.stderr}`);
      if (await isListening('127.0.0.1', port, 500)) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`${this.name} not listening on ${port} within ${timeoutMs} ms: ${this.stderr}`);
  }

  /** Why it stopped, if it did (its last stderr). */
  exited(): string | undefined {
    return this.child.exitCode === null ? undefined : `${this.name} exited (${this.child.exitCode}): ${this.stderr}`;
  }

  /** SIGTERM, SIGKILL after a grace period; then any descendant still alive is killed. */
  async stop(graceMs = 5_000): Promise<void> {
    if (!this.child.pid) return;
    const table = processTable();
    const descendants = withDescendants(table, [this.child.pid])
      .filter((pid) => pid !== this.child.pid)
      .map((pid) => ({ pid, startTime: table.get(pid)!.startTime }));
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
    for (const { pid, startTime } of descendants) {
      if (readStat(pid)?.startTime !== startTime) continue; // gone, or the pid was reused
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}
