import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createAgent, type Agent } from '@mcpgw/agent-sdk';
import { NATS_CONNECTION, type NatsConnection } from '@mcpgw/bus';
import { METRICS_REGISTRY, type ReadinessCheck } from '@mcpgw/observability';
import { Draining } from '@mcpgw/runtime';
import type { Registry } from 'prom-client';
import { AGENT_POD_ENV, type AgentPodEnv } from '../config/agent-pod.env';
import { echoConversation } from '../conversation/echo.handler';
import { conformancePrompts } from '../prompts/conformance.prompts';
import { conformanceResources } from '../resources/conformance.resources';
import { MOCK_AGENT_SKILLS } from '../skills/skills';
import { inboxMetrics } from './inbox-metrics';

/**
 * The mock agent, built with the agent SDK like any other: this pod hosts it
 * in Nest for what every app here has (its /health, /ready and /metrics, the
 * shared drain, one NATS connection metered with the others). Delivery,
 * replies, cancellation and registration are the SDK's
 * (libs/agent-sdk/README.md).
 */
@Injectable()
export class MockAgentService implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly agent: Agent;

  constructor(
    @Inject(AGENT_POD_ENV) env: AgentPodEnv,
    @Inject(NATS_CONNECTION) connection: NatsConnection,
    @Inject(METRICS_REGISTRY) registry: Registry,
    draining: Draining,
  ) {
    const metrics = inboxMetrics(registry, env.AGENT_ID, () => this.agent.consumerState());
    this.agent = createAgent({
      agentId: env.AGENT_ID,
      workspaceId: env.WORKSPACE_ID,
      podId: env.POD_ID,
      busPrefix: env.BUS_PREFIX,
      natsUrl: env.NATS_URL,
      ackWaitMs: env.INBOX_ACK_WAIT_MS,
      maxDeliver: env.INBOX_MAX_DELIVER,
      concurrency: env.POD_CONCURRENCY,
      presenceIntervalMs: env.PRESENCE_INTERVAL_MS,
      skills: MOCK_AGENT_SKILLS,
      resources: conformanceResources,
      prompts: conformancePrompts,
      onMessage: echoConversation,
      connection,
      logger: new Logger('Agent'),
      // Nest's shutdown drains (libs/runtime/README.md); /health must answer while the gateway is not up yet.
      handleSignals: false,
      registerInBackground: true,
      onDelivery: metrics.delivered,
    });
    // The drain: stop pulling; let running skills finish and their replies go out;
    // past the grace, stop them and nak their messages for another pod.
    const steps = this.agent.drainSteps;
    draining.register({
      name: 'inbox',
      stopIntake: steps.stopIntake,
      settled: steps.settled,
      handBack: steps.handBack,
      pending: steps.pending,
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.agent.start();
  }

  /** After the drain (or without one): stop whatever still runs and stop hearing cancellations. */
  onApplicationShutdown(): void {
    const steps = this.agent.drainSteps;
    steps.stopIntake();
    void steps.handBack();
    steps.close();
  }

  /** Ready once registered (the gateway's registry knows the skills) and pulling from the inbox. */
  readiness(): ReadinessCheck[] {
    return [
      { name: 'registration', check: async () => (this.agent.registered ? undefined : 'not registered yet') },
      { name: 'inbox', check: async () => this.agent.inboxNotReady() },
    ];
  }
}
