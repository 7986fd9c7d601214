import { Controller, Delete, Get, Headers, HttpCode, Param, Post, Body, UnauthorizedException } from '@nestjs/common';
import { InvalidRequestError } from '@mcpgw/contracts';
import { ApiKeyAuthenticator } from '../auth/api-key-authenticator.service';
import { WebhooksStore, type DeliveryView, type WebhookView } from './webhooks.store';

/**
 * The REST face of webhook registration, beside the admin CLI, with the same
 * fields. Authenticated like surface A: the agent's API key (X-Agent-API-Key)
 * manages that agent's webhooks, and only those.
 */
@Controller('api/v1/agents/:agentId/webhooks')
export class WebhooksController {
  constructor(
    private readonly auth: ApiKeyAuthenticator,
    private readonly webhooks: WebhooksStore,
  ) {}

  @Post()
  async add(
    @Param('agentId') agentId: string,
    @Headers('x-agent-api-key') key: string | undefined,
    @Body() body: unknown,
  ): Promise<WebhookView & { secret: string }> {
    await this.authenticate(key, agentId);
    const { url, events } = parseBody(body);
    return this.webhooks.add(agentId, url, events);
  }

  @Get()
  async list(@Param('agentId') agentId: string, @Headers('x-agent-api-key') key?: string): Promise<WebhookView[]> {
    await this.authenticate(key, agentId);
    return this.webhooks.list(agentId);
  }

  @Delete(':id')
  async remove(
    @Param('agentId') agentId: string,
    @Param('id') id: string,
    @Headers('x-agent-api-key') key?: string,
  ): Promise<WebhookView> {
    await this.authenticate(key, agentId);
    return this.webhooks.remove(id, agentId);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  async rotate(
    @Param('agentId') agentId: string,
    @Param('id') id: string,
    @Headers('x-agent-api-key') key?: string,
  ): Promise<WebhookView & { secret: string }> {
    await this.authenticate(key, agentId);
    return this.webhooks.rotateSecret(id, agentId);
  }

  @Post(':id/enable')
  @HttpCode(200)
  async enable(
    @Param('agentId') agentId: string,
    @Param('id') id: string,
    @Headers('x-agent-api-key') key?: string,
  ): Promise<WebhookView> {
    await this.authenticate(key, agentId);
    return this.webhooks.enable(id, agentId);
  }

  @Get(':id/deliveries')
  async deliveries(
    @Param('agentId') agentId: string,
    @Param('id') id: string,
    @Headers('x-agent-api-key') key?: string,
  ): Promise<DeliveryView[]> {
    await this.authenticate(key, agentId);
    return this.webhooks.deliveries(id, agentId);
  }

  @Post('deliveries/:deliveryId/redeliver')
  @HttpCode(200)
  async redeliver(
    @Param('agentId') agentId: string,
    @Param('deliveryId') deliveryId: string,
    @Headers('x-agent-api-key') key?: string,
  ): Promise<DeliveryView> {
    await this.authenticate(key, agentId);
    return this.webhooks.redeliver(deliveryId, agentId);
  }

  private async authenticate(key: string | undefined, agentId: string): Promise<void> {
    const result = await this.auth.authenticate(key, agentId);
    if (!result.ok) throw new UnauthorizedException(result.reason);
  }
}

/** `{url, events}`; events as an array of names or a comma list. The gateway reads bodies as text. */
function parseBody(body: unknown): { url: string; events: string[] } {
  let parsed: unknown = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      throw new InvalidRequestError('the body must be JSON: {"url": "...", "events": ["tool_call.completed"]}');
    }
  }
  const { url, events } = (parsed ?? {}) as { url?: unknown; events?: unknown };
  if (typeof url !== 'string') throw new InvalidRequestError('url: a string is required');
  const list = typeof events === 'string' ? events.split(',') : events;
  if (!Array.isArray(list) || !list.every((e) => typeof e === 'string')) {
    throw new InvalidRequestError('events: an array of event type names is required');
  }
  return { url, events: list };
}
