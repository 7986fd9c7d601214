import {
  Body,
  Controller,
  Delete,
  ForbiddenException,
  Get,
  Headers,
  HttpCode,
  HttpException,
  HttpStatus,
  Ip,
  Param,
  Post,
  ServiceUnavailableException,
  UnauthorizedException,
  UsePipes,
} from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import { InvalidRequestError } from '@mcpgw/contracts';
import { TextParamsPipe } from '@mcpgw/runtime';
import { AgentAuthenticator, type AgentAuthResult } from '../auth/agent-authenticator.service';
import { WebhookDeliveryLog, type DeliveryView } from './webhook-delivery-log.store';
import { WebhooksStore, type WebhookScope, type WebhookView } from './webhooks.store';

/**
 * The REST face of webhook registration, beside the admin CLI, with the same
 * fields. Authenticated like surface A: an API key of the agent
 * (X-Agent-API-Key) or, with OAuth on, an access token for the agent's
 * resource. A webhook made here is the caller's: it hears only that caller's
 * calls, and only that caller lists, changes or removes it (another's, the
 * operator's included, is 404). At most WEBHOOK_MAX_PER_OWNER per caller.
 * Ids in the path are one short line of text (a `%00` is 400, never a query).
 */
@Controller('api/v1/agents/:agentId/webhooks')
@UsePipes(TextParamsPipe)
export class WebhooksController {
  constructor(
    private readonly auth: AgentAuthenticator,
    private readonly webhooks: WebhooksStore,
    private readonly deliveryLog: WebhookDeliveryLog,
  ) {}

  @Post()
  async add(
    @Param('agentId') agentId: string,
    @Headers() headers: IncomingHttpHeaders,
    @Ip() ip: string,
    @Body() body: unknown,
  ): Promise<WebhookView & { secret: string }> {
    const scope = await this.authenticate(headers, agentId, ip);
    const { url, events } = parseBody(body);
    return this.webhooks.add(agentId, url, events, scope.owner);
  }

  @Get()
  async list(
    @Param('agentId') agentId: string,
    @Headers() headers: IncomingHttpHeaders,
    @Ip() ip: string,
  ): Promise<WebhookView[]> {
    return this.webhooks.list(await this.authenticate(headers, agentId, ip));
  }

  @Delete(':id')
  async remove(
    @Param('agentId') agentId: string,
    @Param('id') id: string,
    @Headers() headers: IncomingHttpHeaders,
    @Ip() ip: string,
  ): Promise<WebhookView> {
    return this.webhooks.remove(id, await this.authenticate(headers, agentId, ip));
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  async rotate(
    @Param('agentId') agentId: string,
    @Param('id') id: string,
    @Headers() headers: IncomingHttpHeaders,
    @Ip() ip: string,
  ): Promise<WebhookView & { secret: string }> {
    return this.webhooks.rotateSecret(id, await this.authenticate(headers, agentId, ip));
  }

  @Post(':id/enable')
  @HttpCode(200)
  async enable(
    @Param('agentId') agentId: string,
    @Param('id') id: string,
    @Headers() headers: IncomingHttpHeaders,
    @Ip() ip: string,
  ): Promise<WebhookView> {
    return this.webhooks.enable(id, await this.authenticate(headers, agentId, ip));
  }

  @Get(':id/deliveries')
  async deliveries(
    @Param('agentId') agentId: string,
    @Param('id') id: string,
    @Headers() headers: IncomingHttpHeaders,
    @Ip() ip: string,
  ): Promise<DeliveryView[]> {
    return this.deliveryLog.deliveries(id, await this.authenticate(headers, agentId, ip));
  }

  @Post('deliveries/:deliveryId/redeliver')
  @HttpCode(200)
  async redeliver(
    @Param('agentId') agentId: string,
    @Param('deliveryId') deliveryId: string,
    @Headers() headers: IncomingHttpHeaders,
    @Ip() ip: string,
  ): Promise<DeliveryView> {
    return this.deliveryLog.redeliver(deliveryId, await this.authenticate(headers, agentId, ip));
  }

  /** The caller's scope: its own webhooks of this agent. */
  private async authenticate(headers: IncomingHttpHeaders, agentId: string, ip: string): Promise<WebhookScope> {
    const result = await this.auth.authenticate(agentId, headers, ip);
    if (!result.ok) throw refusal(result);
    // The principal as calls name it (CallRequest.callerId), so that its webhooks hear its calls.
    return { agentId, owner: result.principal.callerId };
  }
}

/** A refused caller: 401, 403 (a token short of scopes), 429 (too many unknown tokens from its address) or 503. */
export function refusal(result: Extract<AgentAuthResult, { ok: false }>): HttpException {
  if (result.status === 429) return new HttpException(result.reason, HttpStatus.TOO_MANY_REQUESTS);
  const Exception =
    result.status === 403
      ? ForbiddenException
      : result.status === 503
        ? ServiceUnavailableException
        : UnauthorizedException;
  return new Exception(result.reason);
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
