import { EnvModule } from '@mcpgw/config';
import { Module } from '@nestjs/common';
import {
  BusClient,
  BusModule,
  busDroppedMetric,
  busMessagesMetric,
  busOptionsFromEnv,
  natsConnectionEventsMetric,
} from '@mcpgw/bus';
import { HealthModule, MetricsModule } from '@mcpgw/observability';
import { DrainingModule } from '@mcpgw/runtime';
import { AGENT_POD_ENV, type AgentPodEnv, loadEnv } from './config/agent-pod.env';
import { CancellationsService } from './cancellation/cancellations.service';
import { InboxConsumerService } from './inbox/inbox-consumer.service';
import { CallEventsPublisher } from './replies/call-events.publisher';
import { ClientRequestsService } from './replies/client-requests.service';
import { SkillRunner } from './inbox/skill-runner';
import { RegistrationService } from './registration/registration.service';
import { ReplierService } from './replies/replier.service';
import { conformancePrompts } from './prompts/conformance.prompts';
import { PROMPTS } from './prompts/prompts';
import { conformanceResources } from './resources/conformance.resources';
import { RESOURCES } from './resources/resources';
import { SKILLS } from './skills/skill';
import { MOCK_AGENT_SKILLS } from './skills/skills';

/** The agent itself: its skills, how it registers, consumes and replies. */
@Module({
  providers: [
    { provide: SKILLS, useValue: MOCK_AGENT_SKILLS },
    { provide: RESOURCES, useValue: conformanceResources },
    { provide: PROMPTS, useValue: conformancePrompts },
    RegistrationService,
    ReplierService,
    CallEventsPublisher,
    ClientRequestsService,
    CancellationsService,
    SkillRunner,
    InboxConsumerService,
  ],
  exports: [RegistrationService, InboxConsumerService],
})
class PodModule {}

@Module({
  imports: [
    EnvModule.forRoot(AGENT_POD_ENV, loadEnv),
    DrainingModule,
    BusModule.forRootAsync({
      inject: [AGENT_POD_ENV],
      useFactory: (env: AgentPodEnv) =>
        busOptionsFromEnv(env, `agent-pod-${env.POD_ID}`, { role: 'agent', agentId: env.AGENT_ID }),
    }),
    MetricsModule.forService('agent-pod', [busMessagesMetric, busDroppedMetric, natsConnectionEventsMetric]),
    HealthModule.forChecks({
      imports: [PodModule],
      inject: [BusClient, RegistrationService, InboxConsumerService],
      useFactory: (bus: BusClient, registration: RegistrationService, inbox: InboxConsumerService) => [
        bus.readiness(),
        registration.readiness(),
        inbox.readiness(),
      ],
    }),
    PodModule,
  ],
})
export class AppModule {}
