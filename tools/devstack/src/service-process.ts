import { spawn, type ChildProcess } from 'node:child_process';

const MAX_KEPT_LINES = 20_000;

export type LogLine = Record<string, unknown> & { msg?: string; level?: string };

/**
 * One of our apps as a child process: its JSON log lines are kept and can be
 * awaited, so tests wait for events with a deadline instead of sleeping.
 */
export class ServiceProcess {
  readonly logs: LogLine[] = [];
  /** Where it serves its own HTTP (none for an agent pod), once the stack knows. */
  url?: string;
  /** Where it serves /health, /ready and /metrics (its management port). */
  managementUrl?: string;
  /** Its DevTools WebSocket, when started with `--inspect` (STACK_NODE_ARGS): see inspector.ts. */
  inspectorUrl?: string;
  private readonly child: ChildProcess;
  private readonly listeners = new Set<(line: LogLine) => void>();
  private stderr = '';
  readonly exited: Promise<number | null>;

  constructor(
    readonly name: string,
    entry: string,
    env: Record<string, string>,
    private readonly echo = false,
  ) {
    // STACK_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", to profile the apps.
    const nodeArgs = (process.env.STACK_NODE_ARGS ?? '').split(' ').filter(Boolean);
    this.child = spawn(process.execPath, [...nodeArgs, entry], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
    let buffered = '';
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        this.accept(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
      }
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-10_000);
      this.inspectorUrl ??= /Debugger listening on (ws:\/\/\S+)/.exec(chunk)?.[1];
      if (this.echo) process.stderr.write(`[${this.name}] ${chunk}`);
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * The first log line that matches, from line `since` on (default: all, past
   * and future), or an error at the deadline.
   */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs = 15_000, what = 'log line', since = 0): Promise<LogLine> {
    const seen = this.logs.slice(since).find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(this.failure(`${this.name}: no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      const listener = (line: LogLine) => {
        if (!match(line)) return;
        clearTimeout(timer);
        this.listeners.delete(listener);
        resolve(line);
      };
      this.listeners.add(listener);
      void this.exited.then((code) => {
        if (!this.listeners.has(listener)) return;
        clearTimeout(timer);
        this.listeners.delete(listener);
        reject(this.failure(`${this.name} exited (${code}) before ${what}`));
      });
    });
  }

  /**
   * Every log line from now on, to `listener` (until the returned function is called):
   * for a test that gathers lines beyond what `logs` keeps.
   */
  onLog(listener: (line: LogLine) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Resolves once `GET /ready` on the management port answers 200: the app listens
   * and its dependencies (database, NATS, and for a pod its registration and inbox) are up.
   * An app starts in a few seconds; the default leaves room for a CI machine whose two cores
   * run two test files' stacks and a browser at once, and stays under an e2e test's own 60 s
   * so that this error, not the test's timeout, is what a test that starts an app reports.
   * It carries the app's last log lines (start-up logs are not buffered: they say what it waits for).
   */
  async ready(timeoutMs = 45_000): Promise<void> {
    const url = this.managementUrl;
    if (!url) throw new Error(`${this.name}: no management port known`);
    const deadline = Date.now() + timeoutMs;
    let last = 'no answer';
    while (Date.now() < deadline) {
      if (!this.running) throw this.failure(`${this.name} exited before it was ready`);
      try {
        const response = await fetch(`${url}/ready`);
        if (response.ok) return;
        last = `${response.status} ${await response.text()}`;
      } catch (error) {
        last = (error as Error).message;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw this.failure(`${this.name} not ready within ${timeoutMs} ms (${last})`);
  }

  /** An error that says what the process was doing: its last few log lines, short, and its stderr's tail. */
  private failure(message: string): Error {
    const lines = this.logs.slice(-5).map((line) => JSON.stringify(line).slice(0, 300));
    return new Error(`${message}; last log lines: ${lines.join(' | ') || 'none'}; stderr: ${this.stderr.slice(-500)}`);
  }

  /** Graceful stop (SIGTERM), then SIGKILL after the grace period. */
  async stop(graceMs = 5_000): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Sudden death: no shutdown hooks, no acks. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  private accept(raw: string): void {
    if (!raw.trim()) return;
    let line: LogLine;
    try {
      line = JSON.parse(raw) as LogLine;
    } catch {
      line = { msg: raw };
    }
    this.logs.push(line);
    // A long-running stack (npm start) must not keep every line forever.
    if (this.logs.length > MAX_KEPT_LINES) this.logs.splice(0, this.logs.length - MAX_KEPT_LINES / 2);
    if (this.echo) process.stdout.write(`${raw}\n`);
    for (const listener of this.listeners) listener(line);
  }
}
