import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { ServiceError, type BusErrorCode } from '@mcpgw/contracts';
import type { FastifyReply } from 'fastify';

const STATUS: Record<BusErrorCode, number> = {
  invalid_request: 400,
  not_found: 404,
  unavailable: 503,
  internal: 500,
};

/** REST wire form of the one error hierarchy. Never a stack trace. */
@Catch()
export class ServiceErrorHttpFilter implements ExceptionFilter {
  private readonly logger = new Logger(ServiceErrorHttpFilter.name);

  catch(error: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (error instanceof ServiceError) {
      void reply.status(STATUS[error.code]).send({ error: error.code, message: error.message, details: error.details });
      return;
    }
    if (error instanceof HttpException) {
      void reply.status(error.getStatus()).send({ error: 'http_error', message: error.message });
      return;
    }
    this.logger.error(error instanceof Error ? error : String(error));
    void reply.status(500).send({ error: 'internal', message: 'internal error' });
  }
}
