import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { WebhookDeliveriesStore } from './webhook-deliveries.store';
import { WebhookDispatcher } from './webhook-dispatcher.service';
import { WebhookOutbox } from './webhook-outbox.service';
import { WebhooksController } from './webhooks.controller';
import { WebhooksStore } from './webhooks.store';

/** Signed webhooks: registration (REST), the outbox the call path writes, the dispatcher that sends it. */
@Module({
  imports: [AuthModule],
  controllers: [WebhooksController],
  providers: [WebhooksStore, WebhookDeliveriesStore, WebhookOutbox, WebhookDispatcher],
  exports: [WebhookOutbox],
})
export class WebhooksModule {}
