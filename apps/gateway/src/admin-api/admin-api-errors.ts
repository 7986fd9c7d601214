import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { ServiceError, type BusErrorCode } from '@mcpgw/contracts';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Every refusal of the management API is `{"error": {"code", "message",
 * "request_id"}}`, with one of these codes (docs/admin-openapi.yaml lists them),
 * never a stack trace.
 */
export const ADMIN_ERROR_CODES = [
  'invalid_request',
  'unauthorized',
  'csrf_failed',
  'not_found',
  'payload_too_large',
  'unsupported_media_type',
  'unavailable',
  'internal',
] as const;
export type AdminErrorCode = (typeof ADMIN_ERROR_CODES)[number];

/** A refusal with its status and code, thrown by the guard and the handlers. */
export class AdminApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: AdminErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const SERVICE_ERRORS: Record<BusErrorCode, [number, AdminErrorCode]> = {
  invalid_request: [400, 'invalid_request'],
  not_found: [404, 'not_found'],
  unavailable: [503, 'unavailable'],
  internal: [500, 'internal'],
};

/** Refusals that come from Fastify or Nest before a handler runs: bad JSON, an unknown route, a big body. */
const BY_STATUS: Record<number, AdminErrorCode> = {
  400: 'invalid_request',
  404: 'not_found',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

const logger = new Logger('AdminApi');

/** The status, code and message to answer `error` with; unexpected errors are logged and answered 500. */
export function adminRefusal(error: unknown, request: FastifyRequest): [number, AdminErrorCode, string] {
  if (error instanceof AdminApiError) return [error.status, error.code, error.message];
  if (error instanceof ServiceError) {
    const [status, code] = SERVICE_ERRORS[error.code];
    return [status, code, status === 500 ? 'internal error' : error.message];
  }
  const status = error instanceof HttpException ? error.getStatus() : (error as FastifyError).statusCode;
  const code = status !== undefined ? BY_STATUS[status] : undefined;
  if (status !== undefined && code) {
    const message =
      status === 404 ? `no route ${request.method} ${request.url.split('?', 1)[0]}` : (error as Error).message;
    return [status, code, message];
  }
  logger.error({ msg: 'admin request failed', request_id: request.id, error: (error as Error)?.message });
  return [500, 'internal', 'internal error'];
}

export function sendRefusal(reply: FastifyReply, request: FastifyRequest, error: unknown): void {
  const [status, code, message] = adminRefusal(error, request);
  if (status === 401) reply.header('www-authenticate', 'Bearer realm="mcpgw-admin"');
  void reply.status(status).send({ error: { code, message, request_id: request.id } });
}

/**
 * Errors thrown in handlers and guards, and those Fastify meets before a handler
 * (a body that is not JSON, too large, of another type; an unknown route), which
 * Nest hands to its global filters too.
 */
@Catch()
export class AdminApiErrorFilter implements ExceptionFilter {
  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendRefusal(http.getResponse<FastifyReply>(), http.getRequest<FastifyRequest>(), error);
  }
}
