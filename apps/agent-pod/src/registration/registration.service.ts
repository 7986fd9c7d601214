import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { BusPattern } from '@mcpgw/contracts';
import { BusClient, retry } from '@mcpgw/bus';
import type { ReadinessCheck } from '@mcpgw/observability';
import { AGENT_POD_ENV, type AgentPodEnv } from '../config/agent-pod.env';
import { PROMPTS, type PromptProvider } from '../prompts/prompts';
import { RESOURCES, type ResourceProvider } from '../resources/resources';
import { SKILLS, type Skill } from '../skills/skill';

/**
 * Announces this agent and its skills to the gateway's registry. The gateway may
 * start after the pod, so it retries with backoff until the registry answers.
 */
@Injectable()
export class RegistrationService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RegistrationService.name);
  private readonly stop = new AbortController();
  private registered = false;

  constructor(
    private readonly bus: BusClient,
    @Inject(AGENT_POD_ENV) private readonly env: AgentPodEnv,
    @Inject(SKILLS) private readonly skills: readonly Skill[],
    @Inject(RESOURCES) private readonly resources: ResourceProvider,
    @Inject(PROMPTS) private readonly prompts: PromptProvider,
  ) {}

  onApplicationBootstrap(): void {
    void this.registerUntilAccepted();
  }

  onApplicationShutdown(): void {
    this.stop.abort();
  }

  /** Ready once the gateway's registry knows this agent's skills. */
  readiness(): ReadinessCheck {
    return {
      name: 'registration',
      check: async () => {
        if (!this.registered) return 'not registered yet';
      },
    };
  }

  private async registerUntilAccepted(): Promise<void> {
    const register = async () => {
      const { registered } = await this.bus.requestAs(this.env.AGENT_ID, BusPattern.RegisterAgent, {
        workspace_id: this.env.WORKSPACE_ID,
        agent_id: this.env.AGENT_ID,
        pod_id: this.env.POD_ID,
        skills: this.skills.map((skill) => skill.definition),
        resources: this.resources.resources,
        resource_templates: this.resources.templates,
        prompts: this.prompts.prompts,
      });
      this.registered = true;
      this.logger.log({ msg: 'registered', agent_id: this.env.AGENT_ID, skills: registered });
    };
    await retry(register, {
      firstDelayMs: 250,
      maxDelayMs: 5_000,
      signal: this.stop.signal,
      onRetry: (error, attempt) => {
        if (attempt === 1 || attempt % 10 === 0) {
          this.logger.warn(`registration attempt ${attempt} failed: ${(error as Error).message}; retrying`);
        }
      },
    }).catch(() => undefined); // only when the pod stops first
  }
}
