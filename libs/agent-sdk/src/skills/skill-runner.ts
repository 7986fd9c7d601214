import { AgentNotices, type AgentReply, type ChatMessage, type CompleteDto } from '@mcpgw/contracts';
import type { BusClient, CallIds } from '@mcpgw/bus/core';
import type { CallEventsPublisher } from '../replies/call-events';
import type { Questions } from '../replies/questions';
import type { Replier } from '../replies/replier';
import { SkillStoppedError, type Cancellations, type TrackedCall } from '../cancellation/cancellations';
import type { AgentLogger } from '../logger';
import type { Registration } from '../registration/registration';
import { NO_PROMPTS, NO_RESOURCES } from './catalogue';
import { inSkillSpan } from './skill-span';
import {
  RedeliverError,
  ToolError,
  text,
  toOutput,
  type AgentHandle,
  type Attachment,
  type SkillContext,
  type SkillOutput,
  type SkillResult,
} from './skill';
import { NO_MESSAGE_HANDLER, conversationalMessage } from './message-handler';

/** The span (and error text) name of a conversational message's handler. */
const MESSAGE_SPAN = 'message';

/** The agent stops before the skill finished: the message goes back to the inbox for another instance. */
export class AgentStoppingError extends Error {
  constructor() {
    super('agent shutting down');
    this.name = 'AgentStoppingError';
  }
}

export interface SkillRunnerParts {
  bus: BusClient;
  agentId: string;
  podId: string;
  replier: Replier;
  events: CallEventsPublisher;
  questions: Questions;
  cancellations: Cancellations;
  registration: Registration;
  agent: AgentHandle;
  logger: AgentLogger;
}

/** Runs what a chat message asks for (a skill, a resource read, a prompt) and makes its reply; a call cancelled or out of time gets none. */
export class SkillRunner {
  constructor(private readonly parts: SkillRunnerParts) {}

  /**
   * Stop every running skill: the ones that stop throw AgentStoppingError and
   * their messages are handed back. A skill that returns its output anyway has
   * done its work: its reply is kept and sent, not thrown away to run again elsewhere.
   */
  handBack(): void {
    this.parts.cancellations.abortAll(new AgentStoppingError());
  }

  /**
   * The reply to the message, for the caller to send. Throws SkillStoppedError
   * when the caller cancelled or the call's deadline passed (no reply; the
   * message is done), and any other error when the message should be delivered again.
   */
  async answer(message: ChatMessage, redeliveries: number, ids: CallIds = {}): Promise<AgentReply> {
    const { logger, podId, cancellations, replier } = this.parts;
    const name = message.tool_call?.name;
    // The call's request and trace ids come with the message (its headers), passed to each line.
    logger.debug?.({ msg: 'skill started', message_id: message.id, skill: name, pod_id: podId, redeliveries, ...ids });
    const call = cancellations.track(message);
    try {
      const output = await this.run(message, call, redeliveries);
      if (call.stopped) throw call.reason as SkillStoppedError;
      logger.debug?.({
        msg: 'skill answered',
        message_id: message.id,
        skill: name,
        is_error: !!output.isError,
        ...ids,
      });
      return replier.toReply(message, output);
    } finally {
      call.done();
    }
  }

  private async run(message: ChatMessage, tracked: TrackedCall, attempt: number): Promise<SkillOutput> {
    if (message.resource_read) return this.readResource(message.resource_read.uri);
    if (message.complete) return this.complete(message.complete);
    if (message.prompt_get) {
      return this.getPrompt(message.prompt_get.name, message.prompt_get.arguments, this.asker(message, tracked));
    }
    const call = message.tool_call;
    // Asking for nothing else (no tool call, read, prompt or completion): a conversational message.
    if (!call) return this.converse(message, tracked, attempt);
    const skill = this.parts.registration.skill(call.name);
    if (!skill) return { content: [text(`this agent has no skill ${JSON.stringify(call.name)}`)], isError: true };
    return this.handle(call.name, message, tracked, attempt, (context) => skill.run(call.arguments, context));
  }

  /**
   * A conversational message, to the agent's handler. The gateway sends them
   * only to an agent that registered one; should one come anyway (a handler
   * removed meanwhile, another sender), the answer is an error, not a crash.
   */
  private converse(message: ChatMessage, tracked: TrackedCall, attempt: number): Promise<SkillOutput> {
    const handler = this.parts.registration.current().onMessage;
    if (!handler) return Promise.resolve({ content: [text(NO_MESSAGE_HANDLER)], isError: true });
    const said = conversationalMessage(message);
    return this.handle(MESSAGE_SPAN, message, tracked, attempt, (context) => handler(said, context));
  }

  /** Run a skill (or the message handler): a throw is an error result, but for a stop or a redelivery. */
  private async handle(
    name: string,
    message: ChatMessage,
    tracked: TrackedCall,
    attempt: number,
    work: (context: SkillContext) => Promise<SkillResult>,
  ): Promise<SkillOutput> {
    if (tracked.aborted) throw tracked.reason;
    const context = this.context(message, tracked, attempt);
    return inSkillSpan(name, message, this.parts.podId, async (failed) => {
      try {
        const output = toOutput(await work(context));
        if (output.isError) failed();
        return output;
      } catch (error) {
        if (tracked.aborted) throw tracked.reason;
        failed();
        // Not an answer: the consumer hands the message back for another delivery.
        if (error instanceof RedeliverError) throw error;
        if (error instanceof ToolError) {
          return {
            content: [text(error.message)],
            isError: true,
            ...(error.structured && { structured: error.structured }),
          };
        }
        return { content: [text(`${name} failed: ${(error as Error).message}`)], isError: true };
      }
    });
  }

  private context(message: ChatMessage, tracked: TrackedCall, attempt: number): SkillContext {
    const { bus, agentId, podId, events, replier } = this.parts;
    const { deadline } = tracked;
    return {
      message,
      podId,
      agent: this.parts.agent,
      callId: message.call_id,
      attempt,
      get signal() {
        return tracked.signal;
      },
      deadline: deadline ? Date.now() + deadline.remainingMs() : undefined,
      attachments: (message.attachments ?? []).map((part): Attachment => ({
        name: part.file.name,
        mimeType: part.file.mimeType,
        uri: part.file.uri,
        part,
        download: () => fetch(part.file.uri, { signal: tracked.signal }),
      })),
      history: () => replier.history(message),
      progress: (progress, total, note) =>
        events.publish({ type: 'progress', in_reply_to: message.id, progress, total, message: note }),
      log: (level, data, logger) => events.publish({ type: 'log', in_reply_to: message.id, level, data, logger }),
      ask: this.asker(message, tracked),
      resourceUpdated: (uri) => bus.publish(AgentNotices.at(agentId), { kind: 'resource_updated', uri }),
      pollLater: () => events.publish({ type: 'poll', in_reply_to: message.id }),
    };
  }

  /** resources/read: the contents as structured output, `{contents}`. */
  private async readResource(uri: string): Promise<SkillOutput> {
    const resources = this.parts.registration.current().resources ?? NO_RESOURCES;
    const contents = await resources.read(uri);
    if (!contents) return { content: [text(`no resource ${uri}`)], isError: true };
    return { content: [], structured: { contents } };
  }

  /** completion/complete: `{completion}` as structured output, from the prompt's or the templates' completer. */
  private async complete({ ref, argument, arguments: resolved = {} }: CompleteDto): Promise<SkillOutput> {
    const { resources = NO_RESOURCES, prompts = NO_PROMPTS } = this.parts.registration.current();
    const completer = ref.type === 'ref/prompt' ? prompts.complete : resources.complete;
    const completion = completer ? await completer((ref.name ?? ref.uri)!, argument, resolved) : { values: [] };
    return { content: [], structured: { completion } };
  }

  /** How a skill (or a prompt) of this message asks the client. */
  private asker(message: ChatMessage, tracked: TrackedCall): SkillContext['ask'] {
    return (method, params, key) =>
      this.parts.questions.ask(message.id, method, params, tracked.signal, tracked.deadline, {
        key,
        channelId: message.channel_id,
      });
  }

  /** prompts/get: the rendered messages as structured output, `{description?, messages}`. */
  private async getPrompt(name: string, args: Record<string, string>, ask: SkillContext['ask']): Promise<SkillOutput> {
    const prompts = this.parts.registration.current().prompts ?? NO_PROMPTS;
    const rendered = await prompts.get(name, args, ask);
    if (!rendered) return { content: [text(`no prompt ${name}`)], isError: true };
    return { content: [], structured: rendered as unknown as Record<string, unknown> };
  }
}
