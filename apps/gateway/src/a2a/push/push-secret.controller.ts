import { Controller, Get, Headers, HttpCode, Ip, Param, Post, UsePipes } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import { TextParamsPipe } from '@mcpgw/runtime';
import { AgentAuthenticator } from '../../auth/agent-authenticator.service';
import { refusal } from '../../webhooks/webhooks.controller';
import { PushConfigsStore } from './push-configs.store';

/**
 * The caller's signing secret for its A2A push notifications of one agent
 * (`whsec_…`: every delivery carries the Standard Webhooks signature made
 * with it). Authenticated like the webhooks' REST API (an API key of the
 * agent, or an OAuth token for it): each caller reads its own, made on first
 * use (or on its first push config); rotating it keeps the previous one
 * signing beside it for WEBHOOK_ROTATION_WINDOW_SECONDS.
 */
@Controller('api/v1/agents/:agentId/a2a/push-secret')
@UsePipes(TextParamsPipe)
export class PushSecretController {
  constructor(
    private readonly auth: AgentAuthenticator,
    private readonly store: PushConfigsStore,
  ) {}

  @Get()
  async read(
    @Param('agentId') agentId: string,
    @Headers() headers: IncomingHttpHeaders,
    @Ip() ip: string,
  ): Promise<{ secret: string }> {
    return { secret: await this.store.signingSecret(agentId, await this.owner(headers, agentId, ip)) };
  }

  @Post('rotate')
  @HttpCode(200)
  async rotate(
    @Param('agentId') agentId: string,
    @Headers() headers: IncomingHttpHeaders,
    @Ip() ip: string,
  ): Promise<{ secret: string }> {
    return { secret: await this.store.rotateSigningSecret(agentId, await this.owner(headers, agentId, ip)) };
  }

  /** The caller as calls (and so tasks) name it: the owner of its push configs. */
  private async owner(headers: IncomingHttpHeaders, agentId: string, ip: string): Promise<string> {
    const result = await this.auth.authenticate(agentId, headers, ip);
    if (!result.ok) throw refusal(result);
    return result.principal.callerId;
  }
}
