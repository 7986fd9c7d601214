import type { FastifyReply } from 'fastify';

const RETRY_MS = 1_000;

/**
 * One POST's (or GET's) Server-Sent Events stream. Events carry ids (not in
 * 2026-07-28, whose streams do not resume); from 2025-11-25 on, the stream
 * opens with a priming event (an id and empty data).
 */
export class SseStream {
  private sequence = 0;
  private closed = false;

  constructor(
    private readonly reply: FastifyReply,
    /** Without one, events carry no ids. */
    private readonly streamId?: string,
  ) {}

  open(headers: Record<string, string>, priming: boolean): void {
    this.reply.hijack();
    this.reply.raw.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    this.reply.raw.on('close', () => (this.closed = true));
    // The retry field tells a client how soon to reconnect should the stream break (2025-11-25).
    if (priming && this.streamId) this.write(`id: ${this.nextId()}\nretry: ${RETRY_MS}\ndata: \n\n`);
    // Without a first event, the client would see the stream open only at its first event or
    // keep-alive: send the headers now.
    else this.reply.raw.flushHeaders();
  }

  /** One JSON-RPC message (notification or response) as a `message` event. */
  send(message: unknown): void {
    const id = this.streamId ? `id: ${this.nextId()}\n` : '';
    this.write(`event: message\n${id}data: ${typeof message === 'string' ? message : JSON.stringify(message)}\n\n`);
  }

  /** A comment line keeps proxies from closing an idle stream. */
  keepAlive(): void {
    this.write(': keep-alive\n\n');
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.reply.raw.end();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private nextId(): string {
    return `${this.streamId}-${++this.sequence}`;
  }

  private write(chunk: string): void {
    if (!this.closed) this.reply.raw.write(chunk);
  }
}
