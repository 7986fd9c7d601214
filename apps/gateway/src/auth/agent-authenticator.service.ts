import { Injectable } from '@nestjs/common';
import { AGENT_ID_PATTERN } from '@mcpgw/contracts';
import type { IncomingHttpHeaders } from 'node:http';
import { OAuthAuthenticator } from '../oauth/oauth-authenticator.service';
import { ApiKeyAuthenticator } from './api-key-authenticator.service';
import type { AgentPrincipal } from './principal';

export const API_KEY_HEADER = 'x-agent-api-key';

export type AgentAuthResult =
  | { ok: true; principal: AgentPrincipal }
  /** `challenge`: the `WWW-Authenticate` to send (OAuth on). */
  | { ok: false; status: 401 | 403 | 503; reason: string; challenge?: string };

/**
 * Who calls an agent's endpoint: its API key (`X-Agent-API-Key`), or, with
 * OAuth on, a bearer token of a trusted issuer for the agent's resource
 * (../oauth/). A request that brings both is judged by its API key.
 */
@Injectable()
export class AgentAuthenticator {
  constructor(
    private readonly apiKeys: ApiKeyAuthenticator,
    private readonly oauth: OAuthAuthenticator,
  ) {}

  async authenticate(agentId: string, headers: IncomingHttpHeaders): Promise<AgentAuthResult> {
    if (!AGENT_ID_PATTERN.test(agentId)) return this.refuse(agentId, 'unknown agent');
    const key = headers[API_KEY_HEADER];
    if (Array.isArray(key)) return this.refuse(agentId, 'exactly one X-Agent-API-Key header');
    const bearer = this.oauth.enabled && key === undefined ? bearerToken(headers.authorization) : undefined;
    if (bearer === undefined) {
      const byKey = await this.apiKeys.authenticate(key, agentId);
      if (byKey.ok) return byKey;
      const reason =
        key === undefined && this.oauth.enabled
          ? 'an X-Agent-API-Key header or an OAuth access token (Authorization: Bearer) is required'
          : byKey.reason;
      return this.refuse(agentId, reason);
    }
    const byToken = await this.oauth.authenticate(bearer, agentId);
    if (byToken.ok) return byToken;
    return {
      ok: false,
      status: byToken.status,
      reason: byToken.reason,
      challenge: this.oauth.challenge(agentId, byToken),
    };
  }

  private refuse(agentId: string, reason: string): AgentAuthResult {
    const challenge = this.oauth.enabled && AGENT_ID_PATTERN.test(agentId) ? this.oauth.challenge(agentId) : undefined;
    return { ok: false, status: 401, reason, ...(challenge && { challenge }) };
  }
}

/** The token of `Authorization: Bearer <token>` (RFC 6750 §2.1), if that is what the header holds. */
function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization ?? '');
  return match?.[1];
}
