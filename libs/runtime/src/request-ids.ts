import { Logger } from '@nestjs/common';
import { REQUEST_ID_HEADER, acceptRequestId } from '@mcpgw/observability';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';

/** Fastify's `genReqId`: the caller's `X-Request-Id` when safe, else a UUID; it becomes `request.id`. */
export function requestIdOf(req: IncomingMessage | Http2ServerRequest): string {
  return acceptRequestId(req.headers[REQUEST_ID_HEADER]);
}

/**
 * Every answer carries `X-Request-Id` (`request.id`) and `X-Content-Type-Options:
 * nosniff`. Both are set on the raw response, so that they survive error
 * replies and streams written by hand.
 * Handlers pass `request.id` on to the log lines about the request (`request_id`;
 * libs/observability/README.md says which). At debug level each answered
 * request is one line (`request done`), with its headers: the logger redacts
 * the credentials among them.
 */
export function installRequestIds(fastify: FastifyInstance, debugEnabled: () => boolean): void {
  const logger = new Logger('Http');
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    reply.raw.setHeader(REQUEST_ID_HEADER, request.id);
    // No answer of ours is to be content-sniffed (JSON, SSE, a file's bytes): each says its type.
    reply.raw.setHeader('x-content-type-options', 'nosniff');
    done();
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    // Below debug level, nothing to build for the line.
    if (debugEnabled()) {
      logger.debug({
        msg: 'request done',
        request_id: request.id,
        method: request.method,
        path: request.url.split('?', 1)[0],
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        headers: request.headers,
      });
    }
    done();
  });
}
