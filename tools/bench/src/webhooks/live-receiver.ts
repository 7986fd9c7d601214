import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Arrival, ReceiverReport, ReceiverRequest } from './protocol';

/** The bench's handle on the live receiver process (`receiver.ts`): its port, and the deliveries it saw. */
export class LiveReceiver {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {}

  static async start(timeoutMs = 30_000): Promise<LiveReceiver> {
    const child = fork(join(__dirname, 'receiver.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('webhook receiver: not listening in time')), timeoutMs);
        child.once('exit', (code) => reject(new Error(`webhook receiver exited (${code})`)));
        child.once('message', (report: ReceiverReport) => {
          clearTimeout(timer);
          if (report.type === 'listening' && report.port) resolve(report.port);
          else reject(new Error(`webhook receiver: unexpected '${report.type}'`));
        });
      });
      return new LiveReceiver(child, port);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** The deliveries that arrived since the last collect. */
  collect(timeoutMs = 10_000): Promise<Arrival[]> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('webhook receiver: no answer to collect')), timeoutMs);
      this.child.once('message', (report: ReceiverReport) => {
        clearTimeout(timer);
        if (report.type === 'arrivals') resolve(report.arrivals);
        else reject(new Error(`webhook receiver: unexpected '${report.type}'`));
      });
      this.child.send({ type: 'collect' } satisfies ReceiverRequest);
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}
