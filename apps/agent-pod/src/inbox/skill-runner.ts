import { BusClient, type CallIds } from '@mcpgw/bus';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { AgentNotices, type AgentReply, type ChatMessage } from '@mcpgw/contracts';
import { inSpan } from '@mcpgw/observability';
import { AGENT_POD_ENV, type AgentPodEnv } from '../config/agent-pod.env';
import { PROMPTS, type PromptProvider } from '../prompts/prompts';
import { CallEventsPublisher } from '../replies/call-events.publisher';
import { ClientRequestsService } from '../replies/client-requests.service';
import { RegistrationService } from '../registration/registration.service';
import { RESOURCES, type ResourceProvider } from '../resources/resources';
import { ReplierService } from '../replies/replier.service';
import { SKILLS, text, type Skill, type SkillContext, type SkillOutput } from '../skills/skill';
import { skillsByName } from '../skills/skills';
import { SkillStoppedError, CancellationsService, type TrackedCall } from '../cancellation/cancellations.service';

/** The pod stops before the skill finished: the message goes back to the inbox for another pod. */
export class PodStoppingError extends Error {
  constructor() {
    super('pod shutting down');
  }
}

/** Runs the skill a chat message asks for and writes its reply; a call cancelled or out of time gets none. */
@Injectable()
export class SkillRunner implements OnApplicationShutdown {
  private readonly logger = new Logger(SkillRunner.name);
  private readonly skills: Map<string, Skill>;

  constructor(
    @Inject(SKILLS) skills: readonly Skill[],
    @Inject(AGENT_POD_ENV) private readonly env: AgentPodEnv,
    private readonly replier: ReplierService,
    private readonly events: CallEventsPublisher,
    private readonly clientRequests: ClientRequestsService,
    private readonly cancellations: CancellationsService,
    @Inject(RESOURCES) private readonly resources: ResourceProvider,
    @Inject(PROMPTS) private readonly prompts: PromptProvider,
    private readonly bus: BusClient,
    private readonly registration: RegistrationService,
  ) {
    this.skills = skillsByName(skills);
  }

  onApplicationShutdown(): void {
    this.handBack();
  }

  /**
   * Stop every running skill: the ones that stop throw PodStoppingError and
   * their messages are handed back. A skill that returns its output anyway has
   * done its work: its reply is kept and sent, not thrown away to run again elsewhere.
   */
  handBack(): void {
    this.cancellations.abortAll(new PodStoppingError());
  }

  /**
   * The reply to the message, for the caller to send. Throws SkillStoppedError
   * when the caller cancelled or the call's deadline passed (no reply; the
   * message is done: cancellation/README.md), and any other error when the
   * message should be delivered again.
   */
  async answer(message: ChatMessage, redeliveries: number, ids: CallIds = {}): Promise<AgentReply> {
    const name = message.tool_call?.name;
    // The call's request and trace ids come with the message (its headers), passed to each line.
    this.logger.debug({
      msg: 'skill started',
      message_id: message.id,
      skill: name,
      pod_id: this.env.POD_ID,
      redeliveries,
      ...ids,
    });
    const call = this.cancellations.track(message);
    try {
      const output = await this.run(message, call);
      if (call.stopped) throw call.signal.reason as SkillStoppedError;
      this.logger.debug({
        msg: 'skill answered',
        message_id: message.id,
        skill: name,
        is_error: !!output.isError,
        ...ids,
      });
      return this.replier.toReply(message, output);
    } finally {
      call.done();
    }
  }

  private async run(message: ChatMessage, tracked: TrackedCall): Promise<SkillOutput> {
    const { signal, deadline } = tracked;
    if (message.resource_read) return this.readResource(message.resource_read.uri);
    if (message.prompt_get)
      return this.getPrompt(
        message.prompt_get.name,
        message.prompt_get.arguments,
        this.asker(message, signal, deadline),
      );
    const call = message.tool_call;
    const skill = call && this.skills.get(call.name);
    if (!call || !skill) {
      return { content: [text(`this agent has no skill ${JSON.stringify(call?.name ?? null)}`)], isError: true };
    }
    if (signal.aborted) throw signal.reason;
    const context: SkillContext = {
      message,
      podId: this.env.POD_ID,
      signal,
      history: () => this.replier.history(message),
      progress: (progress, total, note) =>
        this.events.publish({ type: 'progress', in_reply_to: message.id, progress, total, message: note }),
      log: (level, data, logger) => this.events.publish({ type: 'log', in_reply_to: message.id, level, data, logger }),
      ask: this.asker(message, signal, deadline),
      resourceUpdated: (uri) => this.bus.publish(AgentNotices.at(this.env.AGENT_ID), { kind: 'resource_updated', uri }),
      changeList: (list) => this.registration.changeList(list),
      pollLater: () => this.events.publish({ type: 'poll', in_reply_to: message.id }),
    };
    const span = () => ({
      name: `skill ${call.name}`,
      attributes: { 'mcpgw.skill': call.name, 'mcpgw.message_id': message.id, 'mcpgw.pod_id': this.env.POD_ID },
    });
    return inSpan(span, async (active) => {
      try {
        const output = await skill.run(call.arguments, context);
        if (output.isError) active.setAttribute('mcpgw.is_error', true);
        return output;
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        active.setAttribute('mcpgw.is_error', true);
        return { content: [text(`${call.name} failed: ${(error as Error).message}`)], isError: true };
      }
    });
  }

  /** resources/read: the contents as structured output, `{contents}`. */
  private async readResource(uri: string): Promise<SkillOutput> {
    const contents = await this.resources.read(uri);
    if (!contents) return { content: [text(`no resource ${uri}`)], isError: true };
    return { content: [], structured: { contents } };
  }

  /** How a skill (or a prompt) of this message asks the client. */
  private asker(message: ChatMessage, signal: AbortSignal, deadline: TrackedCall['deadline']): SkillContext['ask'] {
    return (method, params, key) =>
      this.clientRequests.ask(message.id, method, params, signal, deadline, { key, channelId: message.channel_id });
  }

  /** prompts/get: the rendered messages as structured output, `{description?, messages}`. */
  private async getPrompt(name: string, args: Record<string, string>, ask: SkillContext['ask']): Promise<SkillOutput> {
    const rendered = await this.prompts.get(name, args, ask);
    if (!rendered) return { content: [text(`no prompt ${name}`)], isError: true };
    return { content: [], structured: rendered as unknown as Record<string, unknown> };
  }
}
