import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Which of the receiver's secrets verified the delivery with `standardwebhooks` (names), if any were set. */
  verifiedWith: string[];
  status: number;
}

/** How a path answers: a status for the n-th request to it (0-based); 0: never answer (hang). */
export type Behaviour = (n: number) => number | Promise<number>;

/**
 * A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records
 * every request, verifies it with the `standardwebhooks` package (unchanged)
 * against the secrets it is given for the path, and answers each path as told.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly secrets = new Map<string, Record<string, string>>();
  private readonly counts = new Map<string, number>();
  private server?: Server;

  /** Start on `port` (0: any). */
  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', async () => {
        const path = req.url ?? '/';
        const body = Buffer.concat(chunks).toString('utf8');
        const n = this.counts.get(path) ?? 0;
        this.counts.set(path, n + 1);
        const verifiedWith = Object.entries(this.secrets.get(path) ?? {})
          .filter(([, secret]) => {
            try {
              new Webhook(secret).verify(body, req.headers as Record<string, string>);
              return true;
            } catch {
              return false;
            }
          })
          .map(([name]) => name);
        const status = await (this.behaviours.get(path) ?? (() => 200))(n);
        this.received.push({ path, headers: req.headers, body, verifiedWith, status });
        if (status === 0) return;
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'no');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    return this;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  on(path: string, behaviour: Behaviour): this {
    this.behaviours.set(path, behaviour);
    return this;
  }

  /** Verify requests to `path` with these secrets (by name). */
  verify(path: string, secrets: Record<string, string>): this {
    this.secrets.set(path, secrets);
    return this;
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

export const eventOf = (r: Received) =>
  JSON.parse(r.body) as { type: string; timestamp: string; data: Record<string, unknown> };
