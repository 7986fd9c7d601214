import type { FastifyReply } from 'fastify';
import { eventId } from '../../streams/event-ids';
import type { StreamRecorder } from '../../streams/resumable-streams.service';

const RETRY_MS = 1_000;

/**
 * One POST's (or GET's) Server-Sent Events stream. Events carry ids (not in
 * 2026-07-28, whose streams do not resume); from 2025-11-25 on, the stream
 * opens with a priming event (an id and empty data). A session's stream has
 * a recorder: its events are stored, so the client can resume it with
 * `Last-Event-ID` on any replica (`../../streams/README.md`), even after the
 * connection closed, until the stream ends.
 */
export class SseStream {
  private sequence: number;
  private closed = false;
  private ended = false;
  private readonly streamId?: string;
  private readonly recorder?: StreamRecorder;

  constructor(
    private readonly reply: FastifyReply,
    /** Without one, events carry no ids. */
    ids?: string | { recorder: StreamRecorder; after?: number },
  ) {
    this.recorder = typeof ids === 'object' ? ids.recorder : undefined;
    this.streamId = typeof ids === 'string' ? ids : ids?.recorder.streamId;
    this.sequence = typeof ids === 'object' ? (ids.after ?? 0) : 0;
  }

  open(headers: Record<string, string>, priming: boolean): void {
    this.reply.hijack();
    this.reply.raw.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    this.reply.raw.on('close', () => {
      this.closed = true;
      void this.recorder?.detach();
    });
    // The retry field tells a client how soon to reconnect should the stream break (2025-11-25).
    if (priming && this.streamId) this.write(`id: ${this.nextId()}\nretry: ${RETRY_MS}\ndata: \n\n`);
    // Without a first event, the client would see the stream open only at its first event or
    // keep-alive: send the headers now.
    else this.reply.raw.flushHeaders();
  }

  /** One JSON-RPC message (notification or response) as a `message` event; stored when the stream is resumable. */
  send(message: unknown): void {
    const data = typeof message === 'string' ? message : JSON.stringify(message);
    if (!this.streamId) return this.write(`event: message\ndata: ${data}\n\n`);
    const seq = ++this.sequence;
    this.write(`event: message\nid: ${eventId(this.streamId, seq)}\ndata: ${data}\n\n`);
    this.recorder?.record(seq, data);
  }

  /** An event stored earlier, sent again with its own id (a resumed stream). */
  replay(seq: number, data: string): void {
    if (this.streamId) this.write(`event: message\nid: ${eventId(this.streamId, seq)}\ndata: ${data}\n\n`);
    this.sequence = Math.max(this.sequence, seq);
  }

  /** A comment line keeps proxies from closing an idle stream. */
  keepAlive(): void {
    this.write(': keep-alive\n\n');
  }

  /** The stream is complete (its response went out): close it; a resume replays and ends. */
  end(): void {
    if (!this.ended) {
      this.ended = true;
      this.recorder?.end();
    }
    this.close();
  }

  /**
   * Close the connection but not the stream (SSE polling, 2025-11-25): the
   * client reconnects after `retry` with `Last-Event-ID` and gets the rest.
   * Only a recorded stream can be released; any other is ended.
   */
  release(): void {
    if (!this.recorder) return this.end();
    this.write(`retry: ${RETRY_MS}\n\n`);
    this.close();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Whether a client can resume this stream elsewhere. */
  get resumable(): boolean {
    return !!this.recorder;
  }

  /**
   * The connection ends once the store has every event and knows no connection
   * holds the stream: a client reconnecting at once finds it free and complete.
   */
  private close(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.recorder) return void this.reply.raw.end();
    void this.recorder.detach().finally(() => this.reply.raw.end());
  }

  private nextId(): string {
    return eventId(this.streamId!, ++this.sequence);
  }

  private write(chunk: string): void {
    if (!this.closed) this.reply.raw.write(chunk);
  }
}
