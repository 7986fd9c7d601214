import { Injectable } from '@nestjs/common';
import { AGENT_ID_PATTERN } from '@mcpgw/contracts';
import type { IncomingHttpHeaders } from 'node:http';
import { AgentsStore, type AuthMethods } from '../agents/agents.store';
import { CacheInvalidationService } from '../cache/cache-invalidation.service';
import { OAuthAuthenticator } from '../oauth/oauth-authenticator.service';
import { ApiKeyAuthenticator } from './api-key-authenticator.service';
import type { AgentPrincipal } from './principal';

export const API_KEY_HEADER = 'x-agent-api-key';

export type AgentAuthResult =
  | { ok: true; principal: AgentPrincipal }
  /** `challenge`: the `WWW-Authenticate` to send (OAuth on). */
  | { ok: false; status: 401 | 403 | 429 | 503; reason: string; challenge?: string };

/**
 * Who calls an agent's endpoint: its API key (`X-Agent-API-Key`), or, with
 * OAuth on for the agent (an issuer of the policy may reach it), a bearer token
 * of such an issuer for the agent's resource (../oauth/), each as the agent
 * allows (`agent auth`: both by default). A
 * request that brings both is judged by its API key. What each agent allows
 * is held in memory, dropped when the agent's row changes (on any replica).
 */
@Injectable()
export class AgentAuthenticator {
  private readonly methods = new Map<string, Promise<AuthMethods>>();

  constructor(
    private readonly apiKeys: ApiKeyAuthenticator,
    private readonly oauth: OAuthAuthenticator,
    private readonly agents: AgentsStore,
    invalidation: CacheInvalidationService,
  ) {
    invalidation.on('agent', (agentId) => (agentId ? this.methods.delete(agentId) : this.methods.clear()));
  }

  /** `source`: the client's address (Fastify `request.ip`), which unknown opaque tokens are counted against. */
  async authenticate(agentId: string, headers: IncomingHttpHeaders, source: string): Promise<AgentAuthResult> {
    if (!AGENT_ID_PATTERN.test(agentId)) return { ok: false, status: 401, reason: 'unknown agent' };
    const oauth = this.oauth.issuersOf(agentId).length > 0;
    const refuse = (reason: string): AgentAuthResult => ({
      ok: false,
      status: 401,
      reason,
      ...(oauth && { challenge: this.oauth.challenge(agentId) }),
    });
    const key = headers[API_KEY_HEADER];
    if (Array.isArray(key)) return refuse('exactly one X-Agent-API-Key header');
    const bearer = oauth && key === undefined ? bearerToken(headers.authorization) : undefined;
    // The credentials first (memory, or a signature), the agent's switches after: made-up agent
    // ids and credentials never reach PostgreSQL.
    if (bearer === undefined) {
      if (key === undefined && oauth) {
        return refuse('an X-Agent-API-Key header or an OAuth access token (Authorization: Bearer) is required');
      }
      const byKey = await this.apiKeys.authenticate(key, agentId);
      if (!byKey.ok) return refuse(byKey.reason);
      return (await this.allowed(agentId)).api_keys ? byKey : refuse('this agent takes no API keys');
    }
    const byToken = await this.oauth.authenticate(bearer, agentId, source);
    if (!byToken.ok) {
      return {
        ok: false,
        status: byToken.status,
        reason: byToken.reason,
        challenge: this.oauth.challenge(agentId, byToken),
      };
    }
    return (await this.allowed(agentId)).oauth ? byToken : refuse('this agent takes no OAuth access tokens');
  }

  private allowed(agentId: string): Promise<AuthMethods> {
    let entry = this.methods.get(agentId);
    if (!entry) {
      entry = this.agents.authMethods(agentId);
      this.methods.set(agentId, entry);
      entry.catch(() => this.methods.delete(agentId));
    }
    return entry;
  }
}

/** The token of `Authorization: Bearer <token>` (RFC 6750 §2.1), if that is what the header holds. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization ?? '');
  return match?.[1];
}
