import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AgentAuthenticator, API_KEY_HEADER, bearerToken } from '../auth/agent-authenticator.service';
import { ApiKeyAuthenticator } from '../auth/api-key-authenticator.service';
import { RuntimeGrantAuthenticator } from '../grants/runtime-grant-authenticator.service';
import { OAuthAuthenticator } from '../oauth/oauth-authenticator.service';
import type { RestFailure } from './problems';
import { agentCaller, grantCaller, type Caller } from '../auth/caller';

export type Authenticated = { ok: true; caller: Caller } | { ok: false; failure: RestFailure };

/**
 * Who calls the REST surface: on an agent's path, its API key or an OAuth token
 * (surface A's rules); on a workspace path, a RuntimeGrant for it (surface B's);
 * on a path that names no agent (`/api/v1/calls/…`), whichever credential it
 * brings, for the agent that credential is for (as the files routes do).
 */
@Injectable()
export class RestAuthenticator {
  constructor(
    private readonly agentAuth: AgentAuthenticator,
    private readonly apiKeys: ApiKeyAuthenticator,
    private readonly grants: RuntimeGrantAuthenticator,
    private readonly oauth: OAuthAuthenticator,
  ) {}

  async ofAgent(agentId: string, req: FastifyRequest): Promise<Authenticated> {
    const auth = await this.agentAuth.authenticate(agentId, req.headers, req.ip);
    if (auth.ok) return { ok: true, caller: agentCaller(auth.principal) };
    const { status, reason, challenge } = auth;
    return { ok: false, failure: { kind: 'unauthorized', status, reason, challenge } };
  }

  async ofGrant(workspaceId: string, agentId: string, req: FastifyRequest): Promise<Authenticated> {
    if (!this.grants.configured)
      return { ok: false, failure: { kind: 'unconfigured', detail: 'this gateway takes no RuntimeGrants' } };
    const auth = await this.grants.authenticate(req.raw.rawHeaders, workspaceId, agentId);
    if (auth.ok) return { ok: true, caller: grantCaller(auth.grant) };
    return { ok: false, failure: { kind: 'unauthorized', status: 401, reason: auth.reason } };
  }

  async ofAny(req: FastifyRequest): Promise<Authenticated> {
    const key = req.headers[API_KEY_HEADER];
    if (key !== undefined) {
      const identified = await this.apiKeys.identify(typeof key === 'string' ? key : undefined);
      if (!identified.ok) return refused(identified.reason);
      return this.ofAgent(identified.principal.agentId, req);
    }
    const token = this.oauth.enabled ? bearerToken(req.headers.authorization) : undefined;
    const agentId = token && this.oauth.agentOf(token);
    if (agentId) return this.ofAgent(agentId, req);
    if (!this.grants.configured) return refused('send X-Agent-API-Key');
    const auth = await this.grants.verify(req.raw.rawHeaders);
    if (auth.ok) return { ok: true, caller: grantCaller(auth.grant) };
    return refused(`send X-Agent-API-Key or a RuntimeGrant: ${auth.reason}`);
  }
}

function refused(reason: string): Authenticated {
  return { ok: false, failure: { kind: 'unauthorized', status: 401, reason } };
}
