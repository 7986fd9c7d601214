import { Controller, Get, Logger, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { API_KEY_HEADER } from '../auth/agent-authenticator.service';
import { A2aAuthenticator } from './a2a-authenticator.service';
import { A2aCards } from './a2a-cards.service';
import { a2aProblem, httpJsonError, type A2aFailure } from './a2a-errors';

const CARD_PATH = '.well-known/agent-card.json';

/**
 * The agent card: `GET /a2a/{agent_id}/.well-known/agent-card.json` (public
 * unless the operator made it private: then the agent's credential is needed)
 * and the RuntimeGrant's `GET /workspaces/{ws}/agents/{agent_id}/a2a/.well-known/agent-card.json`
 * (the grant is needed; only its skills are listed).
 */
@Controller()
export class A2aCardController {
  private readonly logger = new Logger(A2aCardController.name);

  constructor(
    private readonly cards: A2aCards,
    private readonly auth: A2aAuthenticator,
  ) {}

  @Get(`a2a/:agentId/${CARD_PATH}`)
  async ofAgent(@Param('agentId') agentId: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    await this.answer(req, reply, async () => {
      const visibility = await this.cards.visibilityOf(agentId);
      if (!visibility) return { ok: false, failure: { kind: 'agent_not_found', agentId } };
      const credentialed = req.headers[API_KEY_HEADER] !== undefined || req.headers.authorization !== undefined;
      // A credential sent to a public card is checked all the same: a wrong one is never quietly ignored.
      if (visibility === 'private' || credentialed) {
        const auth = await this.auth.ofAgent(agentId, req);
        if (!auth.ok) return { ok: false, failure: auth.failure };
      }
      return { ok: true, card: await this.cards.ofAgent(agentId, req), private: visibility === 'private' };
    });
  }

  @Get(`workspaces/:workspaceId/agents/:agentId/a2a/${CARD_PATH}`)
  async ofGrant(
    @Param('workspaceId') workspaceId: string,
    @Param('agentId') agentId: string,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    await this.answer(req, reply, async () => {
      const auth = await this.auth.ofGrant(workspaceId, agentId, req);
      if (!auth.ok) return { ok: false, failure: auth.failure };
      return { ok: true, card: await this.cards.ofGrant(workspaceId, auth.caller, req), private: true };
    });
  }

  private async answer(
    req: FastifyRequest,
    reply: FastifyReply,
    card: () => Promise<{ ok: true; card: object; private: boolean } | { ok: false; failure: A2aFailure }>,
  ) {
    try {
      const answer = await card();
      if (answer.ok) {
        // Revalidated every time: the card changes as soon as the catalogue does (tool pinning).
        const cache = answer.private ? 'private, no-store' : 'no-cache';
        void reply
          .status(200)
          .headers({ 'content-type': 'application/json', 'cache-control': cache })
          .send(answer.card);
        return;
      }
      const problem = a2aProblem(answer.failure, req.id);
      void reply
        .status(problem.status)
        .headers(problem.headers)
        .header('content-type', 'application/json')
        .send(httpJsonError(problem));
    } catch (error) {
      this.logger.error({
        msg: 'unhandled error serving an A2A card',
        request_id: req.id,
        error: (error as Error).message,
      });
      const problem = a2aProblem({ kind: 'internal' }, req.id);
      if (!reply.sent) void reply.status(500).header('content-type', 'application/json').send(httpJsonError(problem));
    }
  }
}
