import { Controller, Logger, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { whenClientLeaves } from '../cancellation/client-disconnect';
import { REPLAYED_HEADER } from '../idempotency/replay';
import { InvokeEventStream } from './event-stream';
import { parseInvokeBody } from './invoke-request';
import { preferences } from './prefer';
import { restProblem, sendProblem } from './problems';
import { RestAuthenticator, type Authenticated } from './rest-authenticator.service';
import { RestCalls } from './rest-calls.service';
import { RestInvoke } from './rest-invoke.service';

/**
 * `POST /api/v1/agents/{agent_id}/invoke` (an agent API key, or an OAuth token)
 * and its RuntimeGrant twin `POST /workspaces/{ws}/agents/{agent_id}/invoke`:
 * authenticate, read the body, then one of three answers: the result (JSON),
 * the call as a task (`Prefer: respond-async`: 202 and Location), or the
 * agent's events then the result (`Accept: text/event-stream`).
 */
@Controller()
export class InvokeController {
  private readonly logger = new Logger(InvokeController.name);

  constructor(
    private readonly auth: RestAuthenticator,
    private readonly invoker: RestInvoke,
    private readonly calls: RestCalls,
  ) {}

  @Post('api/v1/agents/:agentId/invoke')
  async byKey(@Param('agentId') agentId: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    await this.answer(req, reply, () => this.auth.ofAgent(agentId, req));
  }

  @Post('workspaces/:workspaceId/agents/:agentId/invoke')
  async byGrant(
    @Param('workspaceId') workspaceId: string,
    @Param('agentId') agentId: string,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    await this.answer(req, reply, () => this.auth.ofGrant(workspaceId, agentId, req));
  }

  private async answer(req: FastifyRequest, reply: FastifyReply, authenticate: () => Promise<Authenticated>) {
    try {
      const auth = await authenticate();
      if (!auth.ok) return sendProblem(reply, auth.failure, req.id);
      const parsed = parseInvokeBody(String(req.body ?? ''));
      if (!parsed.ok) {
        const kind = parsed.malformed ? 'malformed' : 'invalid_request';
        return sendProblem(reply, { kind, detail: parsed.detail }, req.id);
      }
      const request = parsed.request;
      const prefer = preferences(req.headers.prefer);
      const options = { requestId: req.id, timeoutMs: prefer.waitMs };
      // A keyed call answers synchronously: its key is what makes retrying it safe (RFC 7240 lets a server ignore a preference).
      if (prefer.respondAsync && request.idempotencyKey === undefined) {
        const started = await this.calls.start(auth.caller, request, options);
        if (!started.ok) return sendProblem(reply, started.failure, req.id);
        void reply
          .status(202)
          .headers({ location: `/api/v1/calls/${started.state.call_id}`, 'preference-applied': 'respond-async' })
          .send(started.state);
        return;
      }
      const signal = whenClientLeaves(reply);
      if (streams(req.headers.accept)) {
        const stream = new InvokeEventStream(reply);
        const answer = await this.invoker.invoke(auth.caller, request, { ...options, signal, onEvent: stream.relay });
        if (answer.ok) return stream.end('result', answer.text);
        return stream.end('error', JSON.stringify(restProblem(answer.failure, req.id).problem));
      }
      const answer = await this.invoker.invoke(auth.caller, request, { ...options, signal });
      if (!answer.ok) return sendProblem(reply, answer.failure, req.id);
      if (answer.replayed) void reply.header(REPLAYED_HEADER, 'true');
      void reply.status(200).header('content-type', 'application/json').send(answer.text);
    } catch (error) {
      this.logger.error({
        msg: 'unhandled error on the REST surface',
        request_id: req.id,
        error: (error as Error).message,
      });
      if (reply.sent) reply.raw.end();
      else sendProblem(reply, { kind: 'internal' }, req.id);
    }
  }
}

/** An event stream when the client asks for one and not for JSON. */
function streams(accept: string | undefined): boolean {
  return /\btext\/event-stream\b/i.test(accept ?? '') && !/\bapplication\/json\b/i.test(accept ?? '');
}
