import type { FastifyReply } from 'fastify';
import { a2aProblem, httpJsonError, jsonRpcError, type A2aFailure } from './a2a-errors';
import type { JsonRpcId } from './json-rpc';
import type { StreamRun } from './task-stream.service';
import { A2A_VERSION, A2A_VERSION_HEADER } from './wire';

/**
 * Write a stream as `text/event-stream`: each StreamResponse one event, its
 * `data` one line of JSON (JSON-RPC: a response with the request's id; HTTP+JSON:
 * the StreamResponse itself). A failure after the stream began is its last
 * event (JSON-RPC: an error response; HTTP+JSON: `event: error`). The stream
 * stops, without stopping the task, when the client leaves.
 */
export async function writeEventStream(
  reply: FastifyReply,
  run: StreamRun,
  binding: { rpcId: JsonRpcId } | 'http-json',
  version: string = A2A_VERSION,
): Promise<void> {
  reply.hijack();
  reply.raw.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-request-id': reply.request.id,
    [A2A_VERSION_HEADER]: version,
  });
  reply.raw.flushHeaders();
  const left = new AbortController();
  reply.raw.on('close', () => left.abort());
  const write = (data: string, event?: string) => {
    if (reply.raw.destroyed || reply.raw.writableEnded) return;
    reply.raw.write(`${event ? `event: ${event}\n` : ''}data: ${data}\n\n`);
  };
  const sink = (response: Record<string, unknown>) =>
    write(
      binding === 'http-json'
        ? JSON.stringify(response)
        : JSON.stringify({ jsonrpc: '2.0', id: binding.rpcId, result: response }),
    );
  let failure: A2aFailure | undefined;
  try {
    failure = await run(sink, left.signal);
  } catch {
    failure = { kind: 'internal' };
  }
  if (failure) {
    const problem = a2aProblem(failure, reply.request.id);
    if (binding === 'http-json') write(JSON.stringify(httpJsonError(problem)), 'error');
    else write(JSON.stringify({ jsonrpc: '2.0', id: binding.rpcId, error: jsonRpcError(problem) }));
  }
  if (!reply.raw.writableEnded) reply.raw.end();
}
