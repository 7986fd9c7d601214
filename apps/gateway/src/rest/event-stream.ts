import type { FastifyReply } from 'fastify';
import type { CallEvent } from '@mcpgw/contracts';

/**
 * An invoke answered as `text/event-stream`: the agent's `progress` and `log`
 * events as they come, in order, then one `result` (the 200 body) or `error`
 * (a problem) event, and the end. Each event's `data` is one line of JSON.
 */
export class InvokeEventStream {
  private next = 0;

  constructor(private readonly reply: FastifyReply) {
    reply.hijack();
    reply.raw.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-request-id': reply.request.id,
    });
    reply.raw.flushHeaders();
  }

  /** The agent's events a REST client is shown (its questions are not: REST has no way to answer them). */
  relay = (event: CallEvent): void => {
    if (event.type === 'progress') {
      const { progress, total, message } = event;
      this.write('progress', JSON.stringify({ progress, total, message }));
    } else if (event.type === 'log') {
      const { level, logger, data } = event;
      this.write('log', JSON.stringify({ level, logger, data }));
    }
  };

  /** The end: `result` with the body JSON text, or `error` with a problem. */
  end(event: 'result' | 'error', json: string): void {
    this.write(event, json);
    this.reply.raw.end();
  }

  private write(event: string, json: string): void {
    if (this.reply.raw.destroyed || this.reply.raw.writableEnded) return;
    this.reply.raw.write(`id: ${this.next++}\nevent: ${event}\ndata: ${json}\n\n`);
  }
}
