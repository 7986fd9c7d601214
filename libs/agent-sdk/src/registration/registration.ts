import { BusPattern, type SkillDefinition } from '@mcpgw/contracts';
import { retry, type BusClient } from '@mcpgw/bus/core';
import type { AgentLogger } from '../logger';
import type { Catalogue } from '../skills/catalogue';
import { NO_PROMPTS, NO_RESOURCES } from '../skills/catalogue';

/**
 * Announces the agent and its catalogue to the gateway's registry: at start
 * (retried with backoff until the registry answers: the gateway may start
 * after the agent), after every reconnect (a gateway that lost its state
 * learns it again), and whenever the catalogue changes.
 */
export class Registration {
  private readonly stopped = new AbortController();
  private registeredOnce = false;
  private reconnects?: Promise<void>;
  private byName: Map<string, Catalogue['skills'][number]>;

  constructor(
    private readonly bus: BusClient,
    private readonly identity: { workspaceId: string; agentId: string; podId: string },
    private catalogue: Catalogue,
    private readonly logger: AgentLogger,
  ) {
    this.byName = skillsByName(catalogue);
  }

  get registered(): boolean {
    return this.registeredOnce;
  }

  /** Resolves once the registry has accepted the catalogue (or the agent stops first). */
  async start(): Promise<void> {
    await this.registerUntilAccepted();
    this.reconnects ??= this.againAfterReconnects();
  }

  stop(): void {
    this.stopped.abort();
  }

  /** The skill of this name, as the catalogue is now (looked up on every call: a map, not a scan). */
  skill(name: string): Catalogue['skills'][number] | undefined {
    return this.byName.get(name);
  }

  current(): Catalogue {
    return this.catalogue;
  }

  /** Change what the agent offers, and register anew: the gateway tells clients watching the lists. */
  async update(catalogue: Partial<Catalogue>): Promise<void> {
    this.catalogue = { ...this.catalogue, ...catalogue };
    this.byName = skillsByName(this.catalogue);
    await this.register();
  }

  private async register(): Promise<void> {
    const { skills, resources = NO_RESOURCES, prompts = NO_PROMPTS } = this.catalogue;
    const { registered } = await this.bus.requestAs(this.identity.agentId, BusPattern.RegisterAgent, {
      workspace_id: this.identity.workspaceId,
      agent_id: this.identity.agentId,
      pod_id: this.identity.podId,
      skills: skills.map((skill): SkillDefinition => skill.definition),
      resources: resources.resources,
      resource_templates: resources.templates,
      prompts: prompts.prompts,
      // The gateway asks only an agent that says it completes (else it answers with no values).
      ...((resources.complete || prompts.complete) && { completions: true }),
      // Likewise conversational messages: only an agent with a handler is sent them.
      ...(this.catalogue.onMessage && { conversation: true }),
    });
    this.registeredOnce = true;
    this.logger.log({ msg: 'registered', agent_id: this.identity.agentId, skills: registered });
  }

  private async registerUntilAccepted(): Promise<void> {
    await retry(() => this.register(), {
      firstDelayMs: 250,
      maxDelayMs: 5_000,
      jitter: true,
      signal: this.stopped.signal,
      // A registration the registry refuses (invalid schema, another workspace) will not pass later either.
      retryIf: (error) => !isRefusal(error),
      onRetry: (error, attempt) => {
        if (attempt === 1 || attempt % 10 === 0) {
          this.logger.warn(`registration attempt ${attempt} failed: ${(error as Error).message}; retrying`);
        }
      },
    }).catch((error) => {
      if (!this.stopped.signal.aborted) throw error;
    });
  }

  private async againAfterReconnects(): Promise<void> {
    for await (const _ of this.bus.reconnects()) {
      if (this.stopped.signal.aborted) return;
      await this.registerUntilAccepted().catch((error: Error) =>
        this.logger.error({ msg: 'registration refused after a reconnect', error: error.message }),
      );
    }
  }
}

function isRefusal(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'invalid_request' || code === 'not_found';
}

function skillsByName(catalogue: Catalogue): Map<string, Catalogue['skills'][number]> {
  return new Map(catalogue.skills.map((skill) => [skill.definition.name, skill]));
}
