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
  /** The lists' fixture entries a skill toggled (`changeList`): how a client sees the lists change. */
  private readonly toggled = { tools: false, prompts: false };

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

  /**
   * Add (or take away again) a fixture tool or prompt, and register anew: the
   * gateway tells clients watching the list that it changed.
   */
  async changeList(list: 'tools' | 'prompts'): Promise<void> {
    this.toggled[list] = !this.toggled[list];
    await this.register();
  }

  private async register(): Promise<void> {
    const { registered } = await this.bus.requestAs(this.env.AGENT_ID, BusPattern.RegisterAgent, {
      workspace_id: this.env.WORKSPACE_ID,
      agent_id: this.env.AGENT_ID,
      pod_id: this.env.POD_ID,
      skills: [...this.skills.map((skill) => skill.definition), ...(this.toggled.tools ? [DYNAMIC_TOOL] : [])],
      resources: this.resources.resources,
      resource_templates: this.resources.templates,
      prompts: [...this.prompts.prompts, ...(this.toggled.prompts ? [DYNAMIC_PROMPT] : [])],
    });
    this.registered = true;
    this.logger.log({ msg: 'registered', agent_id: this.env.AGENT_ID, skills: registered });
  }

  private async registerUntilAccepted(): Promise<void> {
    const register = () => this.register();
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

/** The tool and prompt `changeList` adds and takes away (no skill answers the tool: calling it is a tool error). */
const DYNAMIC_TOOL = {
  name: 'test_dynamic_tool',
  description: 'A tool that comes and goes (test_trigger_tool_change)',
  input_schema: { type: 'object', properties: {} },
  side_effect_class: 'read' as const,
};
const DYNAMIC_PROMPT = { name: 'test_dynamic_prompt', description: 'A prompt that comes and goes' };
