import { spawn, type ChildProcess } from 'node:child_process';
import { isListening } from './ports';

/**
 * One nats-server process, started from a config file, that a test can kill
 * and start again on the same port, store and resolver (a crash and a restart).
 */
export class NatsNode {
  private child?: ChildProcess;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    /** Its `server_name` (what JetStream names a stream's leader and replicas by). */
    readonly name: string,
    readonly port: number,
    private readonly configFile: string,
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Start it; resolves once it accepts connections. */
  async start(): Promise<void> {
    if (this.running) return;
    const child = spawn('nats-server', ['-c', this.configFile], { stdio: 'ignore' });
    this.child = child;
    this.exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    await waitListening(this.port, this.exited);
  }

  /** SIGKILL: no goodbye to its clients or its cluster peers. */
  kill(): Promise<void> {
    return this.halt('SIGKILL');
  }

  /** Kill it, stay down `downMs`, start it again. */
  async restart(downMs = 0): Promise<void> {
    await this.kill();
    await new Promise((r) => setTimeout(r, downMs));
    await this.start();
  }

  /** SIGTERM (SIGKILL after 3 s). */
  stop(): Promise<void> {
    return this.halt('SIGTERM');
  }

  private async halt(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    child.kill(signal);
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, 3_000))]);
    if (this.running) {
      child.kill('SIGKILL');
      await this.exited;
    }
  }
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
