import { Controller, Logger, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AgentAuthenticator } from '../auth/agent-authenticator.service';
import { whenClientLeaves } from '../cancellation/client-disconnect';
import { RuntimeGrantAuthenticator } from '../grants/runtime-grant-authenticator.service';
import { REPLAYED_HEADER } from '../idempotency/replay';
import { parseInvokeBody } from './invoke-request';
import { preferences } from './prefer';
import { sendProblem, type RestFailure } from './problems';
import { agentCaller, grantCaller, type RestCaller } from './rest-caller';
import { RestInvoke } from './rest-invoke.service';

type Authenticated = { ok: true; caller: RestCaller } | { ok: false; failure: RestFailure };

/**
 * `POST /api/v1/agents/{agent_id}/invoke` (an agent API key, or an OAuth token)
 * and its RuntimeGrant twin `POST /workspaces/{ws}/agents/{agent_id}/invoke`:
 * authenticate, read the body, invoke, answer. Everything else is RestInvoke's.
 */
@Controller()
export class InvokeController {
  private readonly logger = new Logger(InvokeController.name);

  constructor(
    private readonly agentAuth: AgentAuthenticator,
    private readonly grantAuth: RuntimeGrantAuthenticator,
    private readonly invoker: RestInvoke,
  ) {}

  @Post('api/v1/agents/:agentId/invoke')
  async byKey(@Param('agentId') agentId: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    await this.answer(req, reply, async () => {
      const auth = await this.agentAuth.authenticate(agentId, req.headers);
      if (auth.ok) return { ok: true, caller: agentCaller(auth.principal) };
      return {
        ok: false,
        failure: { kind: 'unauthorized', status: auth.status, reason: auth.reason, challenge: auth.challenge },
      };
    });
  }

  @Post('workspaces/:workspaceId/agents/:agentId/invoke')
  async byGrant(
    @Param('workspaceId') workspaceId: string,
    @Param('agentId') agentId: string,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    await this.answer(req, reply, async () => {
      if (!this.grantAuth.configured)
        return { ok: false, failure: { kind: 'unconfigured', detail: 'this gateway takes no RuntimeGrants' } };
      const auth = await this.grantAuth.authenticate(req.raw.rawHeaders, workspaceId, agentId);
      if (auth.ok) return { ok: true, caller: grantCaller(auth.grant) };
      return { ok: false, failure: { kind: 'unauthorized', status: 401, reason: auth.reason } };
    });
  }

  private async answer(req: FastifyRequest, reply: FastifyReply, authenticate: () => Promise<Authenticated>) {
    try {
      const auth = await authenticate();
      if (!auth.ok) return sendProblem(reply, auth.failure, req.id);
      const parsed = parseInvokeBody(String(req.body ?? ''));
      if (!parsed.ok)
        return sendProblem(
          reply,
          { kind: parsed.malformed ? 'malformed' : 'invalid_request', detail: parsed.detail },
          req.id,
        );
      const prefer = preferences(req.headers.prefer);
      const answer = await this.invoker.invoke(auth.caller, parsed.request, {
        requestId: req.id,
        timeoutMs: prefer.waitMs,
        signal: whenClientLeaves(reply),
      });
      if (!answer.ok) return sendProblem(reply, answer.failure, req.id);
      if (answer.replayed) void reply.header(REPLAYED_HEADER, 'true');
      void reply.status(200).header('content-type', 'application/json').send(answer.text);
    } catch (error) {
      this.logger.error({
        msg: 'unhandled error on the REST surface',
        request_id: req.id,
        error: (error as Error).message,
      });
      sendProblem(reply, { kind: 'internal' }, req.id);
    }
  }
}
