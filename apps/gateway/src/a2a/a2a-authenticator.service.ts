import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AgentAuthenticator } from '../auth/agent-authenticator.service';
import { RuntimeGrantAuthenticator } from '../grants/runtime-grant-authenticator.service';
import { agentCaller, grantCaller, type Caller } from '../auth/caller';
import type { A2aFailure } from './a2a-errors';

export type A2aAuthenticated = { ok: true; caller: Caller } | { ok: false; failure: A2aFailure };

/**
 * On an agent's A2A path, its API key or an OAuth token (surface A's rules,
 * `AgentAuthenticator`: another agent's key is refused as an unknown one); on a
 * workspace path, a RuntimeGrant for that workspace and agent (surface B's).
 */
@Injectable()
export class A2aAuthenticator {
  constructor(
    private readonly agentAuth: AgentAuthenticator,
    private readonly grants: RuntimeGrantAuthenticator,
  ) {}

  async ofAgent(agentId: string, req: FastifyRequest): Promise<A2aAuthenticated> {
    const auth = await this.agentAuth.authenticate(agentId, req.headers, req.ip);
    if (auth.ok) return { ok: true, caller: agentCaller(auth.principal) };
    const { status, reason, challenge } = auth;
    return { ok: false, failure: { kind: 'unauthorized', status, reason, challenge } };
  }

  async ofGrant(workspaceId: string, agentId: string, req: FastifyRequest): Promise<A2aAuthenticated> {
    if (!this.grants.configured)
      return {
        ok: false,
        failure: { kind: 'unauthorized', status: 503, reason: 'this gateway takes no RuntimeGrants' },
      };
    const auth = await this.grants.authenticate(req.raw.rawHeaders, workspaceId, agentId);
    if (auth.ok) return { ok: true, caller: grantCaller(auth.grant) };
    return { ok: false, failure: { kind: 'unauthorized', status: 401, reason: auth.reason } };
  }
}
