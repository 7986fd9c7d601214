import { Logger } from '@nestjs/common';
import { REQUEST_ID_HEADER, acceptRequestId, runWithLogContext } from '@mcpgw/observability';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';

/** Fastify's `genReqId`: the caller's `X-Request-Id` when safe, else a UUID; it becomes `request.id`. */
export function requestIdOf(req: IncomingMessage | Http2ServerRequest): string {
  return acceptRequestId(req.headers[REQUEST_ID_HEADER]);
}

/**
 * Every answer carries `X-Request-Id` (`request.id`), and every log line written
 * while serving the request carries `request_id`. The header is set on the raw
 * response, so that it survives error replies and streams written by hand.
 * The log context is entered when the request arrives, and again before the
 * handler: the body is read in the socket's async context, not the request's.
 * At debug level each answered request is one line (`request done`), with its
 * headers: the logger redacts the credentials among them.
 */
export function installRequestIds(fastify: FastifyInstance, debugEnabled: () => boolean): void {
  const logger = new Logger('Http');
  const enter = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) =>
    runWithLogContext({ request_id: request.id }, done);
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.raw.setHeader(REQUEST_ID_HEADER, request.id);
    enter(request, reply, done);
  });
  fastify.addHook('preHandler', enter);
  fastify.addHook('onResponse', (request, reply, done) => {
    // Below debug level, nothing to build for the line.
    if (!debugEnabled()) return done();
    runWithLogContext({ request_id: request.id }, () =>
      logger.debug({
        msg: 'request done',
        method: request.method,
        path: request.url.split('?', 1)[0],
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        headers: request.headers,
      }),
    );
    done();
  });
}
