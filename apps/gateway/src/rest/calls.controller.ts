import { Controller, Delete, Get, Logger, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from './problems';
import { RestAuthenticator } from './rest-authenticator.service';
import { RestCalls, type CallAnswer } from './rest-calls.service';

/**
 * `GET /api/v1/calls/{call_id}` (its state, and its result once it ended) and
 * `DELETE` (cancel it: the agent hears it on the bus) for a call made with
 * `Prefer: respond-async`, by the credential that made it.
 */
@Controller('api/v1/calls')
export class CallsController {
  private readonly logger = new Logger(CallsController.name);

  constructor(
    private readonly auth: RestAuthenticator,
    private readonly calls: RestCalls,
  ) {}

  @Get(':callId')
  async get(@Param('callId') callId: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    await this.answer(req, reply, (caller) => this.calls.state(caller, callId));
  }

  @Delete(':callId')
  async cancel(@Param('callId') callId: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    await this.answer(req, reply, (caller) => this.calls.cancel(caller, callId));
  }

  private async answer(
    req: FastifyRequest,
    reply: FastifyReply,
    act: (caller: Parameters<RestCalls['state']>[0]) => Promise<CallAnswer>,
  ) {
    try {
      const auth = await this.auth.ofAny(req);
      if (!auth.ok) return sendProblem(reply, auth.failure, req.id);
      const answer = await act(auth.caller);
      if (!answer.ok) return sendProblem(reply, answer.failure, req.id);
      void reply.status(200).send(answer.state);
    } catch (error) {
      this.logger.error({
        msg: 'unhandled error on the REST calls',
        request_id: req.id,
        error: (error as Error).message,
      });
      sendProblem(reply, { kind: 'internal' }, req.id);
    }
  }
}
