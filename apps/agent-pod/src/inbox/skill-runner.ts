import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { ChatMessage } from '@mcpgw/contracts';
import { AGENT_POD_ENV, type AgentPodEnv } from '../config/agent-pod.env';
import { ReplierService } from '../replies/replier.service';
import { SKILLS, text, type Skill, type SkillOutput } from '../skills/skill';
import { skillsByName } from '../skills/skills';

/** Runs the skill a chat message asks for and stores the reply. */
@Injectable()
export class SkillRunner implements OnApplicationShutdown {
  private readonly logger = new Logger(SkillRunner.name);
  private readonly skills: Map<string, Skill>;
  private readonly shutdown = new AbortController();

  constructor(
    @Inject(SKILLS) skills: readonly Skill[],
    @Inject(AGENT_POD_ENV) private readonly env: AgentPodEnv,
    private readonly replier: ReplierService,
  ) {
    this.skills = skillsByName(skills);
  }

  onApplicationShutdown(): void {
    this.shutdown.abort();
  }

  async answer(message: ChatMessage, redeliveries: number): Promise<void> {
    const name = message.tool_call?.name;
    this.logger.debug({ msg: 'skill started', message_id: message.id, skill: name, pod_id: this.env.POD_ID, redeliveries });
    const output = await this.run(message);
    if (this.shutdown.signal.aborted) throw new Error('pod shutting down');
    await this.replier.reply(message, output);
    this.logger.debug({ msg: 'skill answered', message_id: message.id, skill: name, is_error: !!output.isError });
  }

  private async run(message: ChatMessage): Promise<SkillOutput> {
    const call = message.tool_call;
    const skill = call && this.skills.get(call.name);
    if (!call || !skill) {
      return { content: [text(`this agent has no skill ${JSON.stringify(call?.name ?? null)}`)], isError: true };
    }
    try {
      return await skill.run(call.arguments, {
        message,
        podId: this.env.POD_ID,
        signal: this.shutdown.signal,
        history: () => this.replier.history(message),
      });
    } catch (error) {
      if (this.shutdown.signal.aborted) throw error;
      return { content: [text(`${call.name} failed: ${(error as Error).message}`)], isError: true };
    }
  }
}
