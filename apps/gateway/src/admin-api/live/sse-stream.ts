import type { FastifyReply } from 'fastify';

/** A comment line this often keeps proxies and the browser from timing an idle stream out. */
export const SSE_HEARTBEAT_MS = 15_000;
/**
 * Events written while the client does not read (the socket's buffer full)
 * before the stream is ended: a slow console cannot make the gateway hold an
 * unbounded queue. EventSource reconnects, and the page reloads its figures.
 */
export const SSE_MAX_UNREAD = 500;

/**
 * One `text/event-stream` answer of the management API, written on the raw
 * response (Fastify hands it over: `reply.hijack()`). Each event is `event:`
 * and one `data:` line of JSON (JSON.stringify never writes a line break).
 */
export class SseStream {
  private unread = 0;
  private ended = false;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly closers: (() => void)[] = [];

  constructor(
    private readonly reply: FastifyReply,
    private readonly limits = { heartbeatMs: SSE_HEARTBEAT_MS, maxUnread: SSE_MAX_UNREAD },
  ) {
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-request-id': String(reply.request.id),
      // No proxy buffering (nginx): each event goes out as it is written.
      'x-accel-buffering': 'no',
    });
    raw.on('drain', () => (this.unread = 0));
    raw.on('close', () => this.closed());
    this.heartbeat = setInterval(() => this.write(': heartbeat\n\n'), limits.heartbeatMs).unref();
    this.write(`retry: 3000\n\n`);
  }

  /** False once the stream has ended (the client left, the drain, an overflow). */
  get open(): boolean {
    return !this.ended;
  }

  /** Runs once when the stream ends, whoever ends it. */
  onClose(closer: () => void): void {
    if (this.ended) closer();
    else this.closers.push(closer);
  }

  /** One event; `json` is JSON text already when a string. */
  send(event: string, data: unknown): void {
    const json = typeof data === 'string' ? data : JSON.stringify(data);
    this.write(`event: ${event}\ndata: ${json}\n\n`);
  }

  /** A last event, then the end of the answer. */
  end(event?: string, data?: unknown): void {
    if (this.ended) return;
    if (event) this.send(event, data ?? {});
    this.reply.raw.end();
    this.closed();
  }

  private write(chunk: string): void {
    if (this.ended) return;
    if (this.unread >= this.limits.maxUnread) {
      // The client stopped reading: give up on it rather than queue more.
      this.reply.raw.destroy();
      this.closed();
      return;
    }
    if (!this.reply.raw.write(chunk)) this.unread++;
  }

  private closed(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.heartbeat);
    for (const closer of this.closers.splice(0)) closer();
  }
}

/** The open streams of one management API server, ended all at once when it stops (the drain). */
export class LiveStreams {
  private readonly open = new Set<SseStream>();

  start(reply: FastifyReply): SseStream {
    const stream = new SseStream(reply);
    this.open.add(stream);
    stream.onClose(() => this.open.delete(stream));
    return stream;
  }

  get size(): number {
    return this.open.size;
  }

  /** Tell each client the server is going (`bye`), and end its stream: EventSource reconnects, to another replica. */
  endAll(): void {
    for (const stream of [...this.open]) stream.end('bye', { reason: 'the gateway is shutting down' });
  }
}
