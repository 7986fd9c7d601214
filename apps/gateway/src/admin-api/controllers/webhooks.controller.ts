import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { WebhookDeliveryLog, type DeliveryView } from '../../webhooks/webhook-delivery-log.store';
import { WebhooksStore, type WebhookView } from '../../webhooks/webhooks.store';

/**
 * Webhooks of every agent and owner, as the operator sees them (the CLI's
 * `webhook list|deliveries|redeliver|enable`), never with their secrets.
 */
@Controller('admin/v1')
export class WebhooksController {
  constructor(
    private readonly webhooks: WebhooksStore,
    private readonly deliveryLog: WebhookDeliveryLog,
  ) {}

  @Get('webhooks')
  async list(@Query('agent_id') agentId?: string): Promise<{ items: WebhookView[] }> {
    return { items: await this.webhooks.list(undefined, agentId || undefined) };
  }

  @Get('webhooks/:webhookId/deliveries')
  async deliveries(@Param('webhookId') webhookId: string): Promise<{ items: DeliveryView[] }> {
    return { items: await this.deliveryLog.deliveries(webhookId) };
  }

  /** Send to a webhook that a 410 Gone disabled again. */
  @Post('webhooks/:webhookId/enable')
  @HttpCode(200)
  enable(@Param('webhookId') webhookId: string): Promise<WebhookView> {
    return this.webhooks.enable(webhookId);
  }

  /** Send a delivery again, with the same webhook-id and fresh attempts. */
  @Post('webhook-deliveries/:deliveryId/redeliver')
  @HttpCode(200)
  redeliver(@Param('deliveryId') deliveryId: string): Promise<DeliveryView> {
    return this.deliveryLog.redeliver(deliveryId);
  }
}
