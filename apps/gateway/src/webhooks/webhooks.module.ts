import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { WebhookAttempts } from './webhook-attempts';
import { WebhookDeliveriesStore } from './webhook-deliveries.store';
import { WebhookDeliveryLog } from './webhook-delivery-log.store';
import { WebhookDirectSender } from './webhook-direct-sender';
import { WebhookDispatcher } from './webhook-dispatcher.service';
import { WebhookEventsStore } from './webhook-events.store';
import { WebhookOutbox } from './webhook-outbox.service';
import { WebhooksController } from './webhooks.controller';
import { WebhooksStore } from './webhooks.store';

/** Signed webhooks: registration (REST), the outbox the call path writes, the dispatcher that sends it. */
@Module({
  imports: [AuthModule],
  controllers: [WebhooksController],
  providers: [
    WebhooksStore,
    WebhookDeliveryLog,
    WebhookEventsStore,
    WebhookDeliveriesStore,
    WebhookOutbox,
    WebhookAttempts,
    WebhookDispatcher,
    WebhookDirectSender,
  ],
  exports: [WebhookOutbox],
})
export class WebhooksModule {}
