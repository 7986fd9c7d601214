import { EnvModule } from '@mcpgw/config';
import { Module } from '@nestjs/common';
import {
  BusClient,
  BusModule,
  busDroppedMetric,
  busMessagesMetric,
  busOptionsFromEnv,
  natsConnectionEventsMetric,
  natsCredentialsExpiryMetric,
} from '@mcpgw/bus';
import { HealthModule, MetricsModule } from '@mcpgw/observability';
import { DrainingModule } from '@mcpgw/runtime';
import { AGENT_POD_ENV, type AgentPodEnv, loadEnv } from './config/agent-pod.env';
import { MockAgentService } from './agent/mock-agent.service';

/** The mock agent, on the agent SDK. */
@Module({
  providers: [MockAgentService],
  exports: [MockAgentService],
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
    MetricsModule.forService('agent-pod', [
      busMessagesMetric,
      busDroppedMetric,
      natsConnectionEventsMetric,
      natsCredentialsExpiryMetric,
    ]),
    HealthModule.forChecks({
      imports: [PodModule],
      inject: [BusClient, MockAgentService],
      useFactory: (bus: BusClient, pod: MockAgentService) => [bus.readiness(), ...pod.readiness()],
    }),
    PodModule,
  ],
})
export class AppModule {}
