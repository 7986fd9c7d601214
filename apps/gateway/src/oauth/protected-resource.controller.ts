import { Controller, Get, Param, Res } from '@nestjs/common';
import { AGENT_ID_PATTERN } from '@mcpgw/contracts';
import type { FastifyReply } from 'fastify';
import { OAuthAuthenticator } from './oauth-authenticator.service';

/**
 * Protected-resource metadata (RFC 9728) of each agent's endpoint, in the
 * path-suffixed form: where a client that got a 401 learns which issuers to
 * ask for a token, for which resource, with which scopes. Public (a client
 * reads it before it has a token); only the issuers the policy lets reach
 * this agent are named, and `scopes_supported` only when they all need the
 * same. 404 while no issuer may reach the agent (OAuth is off for it).
 */
@Controller('.well-known/oauth-protected-resource')
export class ProtectedResourceController {
  constructor(private readonly oauth: OAuthAuthenticator) {}

  @Get(':agentId/mcp')
  metadata(@Param('agentId') agentId: string, @Res() reply: FastifyReply): void {
    const issuers = AGENT_ID_PATTERN.test(agentId) ? this.oauth.issuersOf(agentId) : [];
    if (issuers.length === 0) {
      void reply.status(404).send({ error: 'not_found' });
      return;
    }
    const scopes = this.oauth.scopesOf(agentId);
    void reply
      .header('access-control-allow-origin', '*')
      .header('cache-control', 'public, max-age=300')
      .send({
        resource: this.oauth.resourceOf(agentId),
        authorization_servers: issuers,
        ...(scopes && { scopes_supported: scopes }),
        bearer_methods_supported: ['header'],
        resource_name: `MCP agent ${agentId}`,
      });
  }
}
