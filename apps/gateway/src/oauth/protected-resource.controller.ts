import { Controller, Get, Param, Res } from '@nestjs/common';
import { AGENT_ID_PATTERN } from '@mcpgw/contracts';
import type { FastifyReply } from 'fastify';
import { OAuthAuthenticator } from './oauth-authenticator.service';

/**
 * Protected-resource metadata (RFC 9728) of each agent's endpoint, in the
 * path-suffixed form: where a client that got a 401 learns which issuers to
 * ask for a token, for which resource, with which scopes. Public (a client
 * reads it before it has a token); 404 while OAuth is off.
 */
@Controller('.well-known/oauth-protected-resource')
export class ProtectedResourceController {
  constructor(private readonly oauth: OAuthAuthenticator) {}

  @Get(':agentId/mcp')
  metadata(@Param('agentId') agentId: string, @Res() reply: FastifyReply): void {
    if (!this.oauth.enabled || !AGENT_ID_PATTERN.test(agentId)) {
      void reply.status(404).send({ error: 'not_found' });
      return;
    }
    void reply
      .header('access-control-allow-origin', '*')
      .header('cache-control', 'public, max-age=300')
      .send({
        resource: this.oauth.resourceOf(agentId),
        authorization_servers: this.oauth.issuers,
        scopes_supported: this.oauth.scopes,
        bearer_methods_supported: ['header'],
        resource_name: `MCP agent ${agentId}`,
      });
  }
}
