import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** Routes whose bodies may take longer to arrive than the others' (uploads), and how long. */
export interface SlowBodies {
  timeoutMs: number;
  route(method: string, url: string): boolean;
}

/** What Node answers when its own request timeout cuts a request. */
const REQUEST_TIMEOUT_RESPONSE = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';
/** How often requests still reading their bodies are checked (Node checks its own limit as often). */
const SWEEP_EVERY_MS = 1_000;

/**
 * Node's `requestTimeout` is one limit for every request of a server. An app
 * with slow routes (`SlowBodies`, e.g. file uploads) runs its server at the
 * slow routes' limit, and this holds every other request to `timeoutMs`
 * (HTTP_REQUEST_TIMEOUT_MS) the same way: a body not complete by then is
 * answered 408 and the connection closed. A request is only noted here (no
 * timer or hook of its own); one sweep a second looks at those still reading.
 */
export function holdBodiesTo(fastify: FastifyInstance, timeoutMs: number, slow: SlowBodies): void {
  const reading = new Map<IncomingMessage, number>();
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [request, deadline] of reading) {
        if (request.complete || request.socket.destroyed) reading.delete(request);
        else if (now >= deadline) {
          reading.delete(request);
          cut(request.socket);
        }
      }
    },
    Math.min(SWEEP_EVERY_MS, timeoutMs),
  ).unref();
  // A listener on the server's own event, not a Fastify hook: it costs every request almost nothing.
  fastify.server.on('request', (request: IncomingMessage) => {
    if (!request.complete && !slow.route(request.method ?? '', request.url ?? ''))
      reading.set(request, Date.now() + timeoutMs);
  });
  fastify.server.on('close', () => clearInterval(sweep));
}

function cut(socket: Socket): void {
  if (socket.writable) socket.end(REQUEST_TIMEOUT_RESPONSE);
  // A client that never reads its answer does not hold the socket either.
  setTimeout(() => socket.destroy(), SWEEP_EVERY_MS).unref();
}
