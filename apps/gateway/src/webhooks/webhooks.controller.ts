import { Controller, Delete, Get, Headers, HttpCode, Param, Post, Body, UnauthorizedException } from '@nestjs/common';
import { InvalidRequestError } from '@mcpgw/contracts';
import { ApiKeyAuthenticator } from '../auth/api-key-authenticator.service';
import { WebhooksStore, type DeliveryView, type WebhookScope, type WebhookView } from './webhooks.store';

/**
 * The REST face of webhook registration, beside the admin CLI, with the same
 * fields. Authenticated like surface A: an API key of the agent
 * (X-Agent-API-Key). A webhook made here is the key's: it hears only that
 * key's calls, and only that key lists, changes or removes it (another's,
 * the operator's included, is 404). At most WEBHOOK_MAX_PER_OWNER per key.
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
    const scope = await this.authenticate(key, agentId);
    const { url, events } = parseBody(body);
    return this.webhooks.add(agentId, url, events, scope.owner);
  }

  @Get()
  async list(@Param('agentId') agentId: string, @Headers('x-agent-api-key') key?: string): Promise<WebhookView[]> {
    return this.webhooks.list(await this.authenticate(key, agentId));
  }

  @Delete(':id')
  async remove(
    @Param('agentId') agentId: string,
    @Param('id') id: string,
    @Headers('x-agent-api-key') key?: string,
  ): Promise<WebhookView> {
    return this.webhooks.remove(id, await this.authenticate(key, agentId));
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  async rotate(
    @Param('agentId') agentId: string,
    @Param('id') id: string,
    @Headers('x-agent-api-key') key?: string,
  ): Promise<WebhookView & { secret: string }> {
    return this.webhooks.rotateSecret(id, await this.authenticate(key, agentId));
  }

  @Post(':id/enable')
  @HttpCode(200)
  async enable(
    @Param('agentId') agentId: string,
    @Param('id') id: string,
    @Headers('x-agent-api-key') key?: string,
  ): Promise<WebhookView> {
    return this.webhooks.enable(id, await this.authenticate(key, agentId));
  }

  @Get(':id/deliveries')
  async deliveries(
    @Param('agentId') agentId: string,
    @Param('id') id: string,
    @Headers('x-agent-api-key') key?: string,
  ): Promise<DeliveryView[]> {
    return this.webhooks.deliveries(id, await this.authenticate(key, agentId));
  }

  @Post('deliveries/:deliveryId/redeliver')
  @HttpCode(200)
  async redeliver(
    @Param('agentId') agentId: string,
    @Param('deliveryId') deliveryId: string,
    @Headers('x-agent-api-key') key?: string,
  ): Promise<DeliveryView> {
    return this.webhooks.redeliver(deliveryId, await this.authenticate(key, agentId));
  }

  /** The key's scope: its own webhooks of this agent. */
  private async authenticate(key: string | undefined, agentId: string): Promise<WebhookScope> {
    const result = await this.auth.authenticate(key, agentId);
    if (!result.ok) throw new UnauthorizedException(result.reason);
    // The principal as calls name it (CallRequest.callerId), so that its webhooks hear its calls.
    return { agentId, owner: result.principal.callerId };
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
