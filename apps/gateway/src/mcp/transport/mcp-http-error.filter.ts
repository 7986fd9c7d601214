import { Catch, HttpException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { ServiceErrorHttpFilter } from '@mcpgw/runtime';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { JsonRpcCode, failure } from '../protocol/json-rpc';

const MCP_PATH = /^\/(?:[^/?]+\/mcp|workspaces\/[^/?]+\/agents\/[^/?]+\/mcp\/http)\/?(?:\?|$)/;

/**
 * Errors raised before an MCP handler runs (the body-size limit, enforced while
 * the body streams in; an unknown method on an MCP path) still answer MCP
 * clients in JSON-RPC: 413 is `-32600`. Other paths keep the REST error form.
 */
@Catch()
export class McpHttpErrorFilter implements ExceptionFilter {
  private readonly rest = new ServiceErrorHttpFilter();

  catch(error: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    if (!MCP_PATH.test(request.url)) return this.rest.catch(error, host);
    const status = error instanceof HttpException ? error.getStatus() : 500;
    const message =
      status === 413
        ? 'the request body is larger than this gateway accepts'
        : status === 404
          ? `${request.method} is not supported on this endpoint`
          : status === 403
            ? (error as HttpException).message
            : 'internal error';
    const code = status === 500 ? JsonRpcCode.InternalError : JsonRpcCode.InvalidRequest;
    void host
      .switchToHttp()
      .getResponse<FastifyReply>()
      .status(status === 404 ? 405 : status)
      .header('content-type', 'application/json')
      .send(JSON.stringify(failure(null, code, message)));
  }
}
