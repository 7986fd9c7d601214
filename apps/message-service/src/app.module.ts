import { EnvModule } from '@mcpgw/config';
import { Module } from '@nestjs/common';
import {
  BusClient,
  BusModule,
  InboxPublisher,
  busDroppedMetric,
  busMessagesMetric,
  busOptionsFromEnv,
  natsConnectionEventsMetric,
  natsCredentialsExpiryMetric,
} from '@mcpgw/bus';
import { DATABASE_READINESS, MIGRATIONS_READINESS, databaseHoldMetrics, sqlMetrics } from '@mcpgw/persistence';
import { HealthModule, MetricsModule, type ReadinessCheck } from '@mcpgw/observability';
import { DrainingModule } from '@mcpgw/runtime';
import { MESSAGE_SERVICE_ENV, type MessageServiceEnv, loadEnv } from './config/message-service.env';
import { ConversationsHttpController } from './conversations/conversations-http.controller';
import { ConversationsMsController } from './conversations/conversations-ms.controller';
import { ConversationsService } from './conversations/conversations.service';
import { ConversationsStore } from './conversations/conversations.store';
import { DatabaseModule } from './database/database.module';
import { AgentDeliveryService } from './delivery/agent-delivery.service';
import { MessagesHttpController } from './messages/messages-http.controller';
import { MessagesMsController } from './messages/messages-ms.controller';
import { MessagesService } from './messages/messages.service';
import { MessagesStore } from './messages/messages.store';
import { DirectRepliesService } from './replies/direct-replies.service';
import { replicaRepliesSubject } from './replies/replica-replies.subject';
import { RetentionService, retentionPurgedMetric } from './retention/retention.service';
import { InboxStreamMetrics } from './delivery/inbox-stream-metrics';
import { InboxWatchService, inboxTamperingMetric } from './delivery/inbox-watch.service';
import { RetentionStore } from './retention/retention.store';
import { ReplyNotices } from './wait/reply-notices.service';
import { WaitService } from './wait/wait.service';

@Module({
  imports: [
    EnvModule.forRoot(MESSAGE_SERVICE_ENV, loadEnv),
    DrainingModule,
    DatabaseModule,
    BusModule.forRootAsync({
      inject: [MESSAGE_SERVICE_ENV],
      useFactory: (env: MessageServiceEnv) =>
        busOptionsFromEnv(env, `message-service-${env.SERVICE_INSTANCE}`, { role: 'message-service' }),
    }),
    MetricsModule.forService('message-service', [
      busMessagesMetric,
      busDroppedMetric,
      natsConnectionEventsMetric,
      natsCredentialsExpiryMetric,
      retentionPurgedMetric,
      inboxTamperingMetric,
      ...sqlMetrics,
      ...databaseHoldMetrics,
    ]),
    HealthModule.forChecks({
      // Its bus handlers (`consumers`) are added by runService (libs/runtime).
      inject: [DATABASE_READINESS, MIGRATIONS_READINESS, BusClient, InboxPublisher],
      useFactory: (database: ReadinessCheck, migrations: ReadinessCheck, bus: BusClient, inboxes: InboxPublisher) => [
        database,
        migrations,
        bus.readiness(),
        inboxes.readiness(),
      ],
    }),
  ],
  controllers: [MessagesMsController, MessagesHttpController, ConversationsMsController, ConversationsHttpController],
  providers: [
    replicaRepliesSubject,
    MessagesStore,
    MessagesService,
    AgentDeliveryService,
    InboxWatchService,
    InboxStreamMetrics,
    DirectRepliesService,
    ReplyNotices,
    WaitService,
    RetentionStore,
    RetentionService,
    ConversationsStore,
    ConversationsService,
  ],
})
export class AppModule {}
