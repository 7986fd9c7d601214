import type { FastifyReply } from 'fastify';
import type { JsonRpcResponse } from '../protocol/json-rpc';

export const SESSION_HEADER = 'mcp-session-id';

/**
 * Writes one JSON-RPC response the way the client accepts it: a JSON body, or
 * (when the client takes only event streams) a one-event SSE stream.
 */
export function sendRpc(
  reply: FastifyReply,
  accept: string | undefined,
  status: number,
  body: JsonRpcResponse | JsonRpcResponse[] | string,
  headers: Record<string, string> = {},
): void {
  reply.headers(headers);
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  if (wantsOnlySse(accept)) {
    void reply
      .status(status)
      .header('content-type', 'text/event-stream')
      .header('cache-control', 'no-cache')
      .send(`event: message\ndata: ${text}\n\n`);
    return;
  }
  void reply.status(status).header('content-type', 'application/json').send(text);
}

/** The client can take neither JSON nor an event stream. */
export function acceptsNeither(accept: string | undefined): boolean {
  if (!accept) return false;
  return !/application\/json|text\/event-stream|\*\/\*|application\/\*/i.test(accept);
}

/** The client accepts an event stream (it may accept JSON too). */
export function acceptsSse(accept: string | undefined): boolean {
  return !!accept && /text\/event-stream|\*\/\*/i.test(accept);
}

function wantsOnlySse(accept: string | undefined): boolean {
  return !!accept && /text\/event-stream/i.test(accept) && !/application\/json|\*\/\*|application\/\*/i.test(accept);
}
