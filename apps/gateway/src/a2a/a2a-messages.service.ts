import { Inject, Injectable } from '@nestjs/common';
import { ToolNotFoundError } from '../calls/call-errors';
import { CallRunner } from '../calls/call-runner.service';
import type { CallOutcome, CallRequest } from '../calls/call-shapes';
import { ToolCatalogueService, type AgentCatalogue } from '../catalogue/tool-catalogue.service';
import { ATTACHMENTS_ARGUMENT } from '../files/attachments';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { QuotasService } from '../quotas/quotas.service';
import { callerLacks, callerMayUse, callerMeta } from '../auth/caller';
import { ConversationHandles } from '../sessions/conversation-handles';
import { CallTime } from '../timeouts/call-time';
import type { Caller } from '../auth/caller';
import { conversationMeta, conversationRefusal } from './conversation-rights';
import type { A2aFailure } from './a2a-errors';
import { A2aTasks, type TaskAnswer } from './a2a-tasks.service';
import { A2aPush } from './push/a2a-push.service';
import type { PushConfigInput } from './push/push-config-shapes';
import { a2aTaskId } from './task-shapes';
import { agentMessage } from './answers';
import { chatMessageIdOf } from './message-ids';
import { A2aTaskStreams, type StreamStart } from './task-stream.service';
import type { SendMessage } from './send-message';
import type { SendMessageResponse } from './wire';

export interface SendOptions {
  /** The HTTP request's id, for the call's log lines. */
  requestId: string;
  /**
   * Aborted when the client leaves: a blocking message with a push config stops waiting for its
   * task. Never the call: a call is stopped by CancelTask only (README.md, "A client that leaves").
   */
  signal?: AbortSignal;
  /** The request came over A2A 0.3 (compat-v03.ts): a push config it sends hears 0.3's body. */
  legacy?: boolean;
}

/** The `SendMessageResponse` as JSON text (or, on the task path, the Task) (as stored for a repeated messageId), or the failure. */
export type SendAnswer = { ok: true; text: string; replayed: boolean } | { ok: false; failure: A2aFailure };

/**
 * The A2A dialect of a tool call. A message whose metadata names a skill is a
 * call of that tool: the caller's rights on it (as on REST), its quotas, then
 * the one call path (CallRunner on surface `a2a`: the pipeline's schema check,
 * deadline and attachments, metrics, trace, webhooks, console activity), with
 * the messageId as its idempotency key. The reply is rendered as the agent's
 * message; a repeated messageId gets the same reply rendered again, the same
 * message (the render depends on the reply and the posting only).
 *
 * `contextId` is the conversation's channel, carried as a conversation handle
 * (as MCP's stateless calls carry theirs): a message that sends one back
 * continues that channel; any other contextId starts a new one.
 */
@Injectable()
export class A2aMessages {
  constructor(
    private readonly catalogue: ToolCatalogueService,
    private readonly calls: CallRunner,
    private readonly quotas: QuotasService,
    private readonly conversations: ConversationHandles,
    private readonly tasks: A2aTasks,
    private readonly streams: A2aTaskStreams,
    private readonly push: A2aPush,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  async send(caller: Caller, send: SendMessage, options: SendOptions): Promise<SendAnswer> {
    if (send.message.taskId) {
      const answered = await this.tasks.answerQuestion(caller, send.message.taskId, send);
      return answered.ok ? { ok: true, text: `{"task":${answered.text}}`, replayed: false } : answered;
    }
    const prepared = await this.prepare(caller, send, options);
    if (!prepared.ok) return prepared;
    const { call } = prepared;
    const push = await this.pushConfigOf(call, send.pushConfig, options.legacy);
    if (!push.ok) return push;
    const admitted = this.quotas.admitCalls(caller.agentId, caller.callerId);
    if (!admitted.ok) return { ok: false, failure: { kind: 'quota', refusal: admitted.refusal } };
    try {
      // A push config needs a task to push for: a message that sends one is a task, blocking or not.
      if (send.returnImmediately || push.config) {
        const started = await this.start(caller, call, push.config);
        if (!started.ok) return started;
        const task = send.returnImmediately ? started : await this.settled(caller, call.messageId, options.signal);
        return task.ok ? { ok: true, text: `{"task":${task.text}}`, replayed: false } : task;
      }
      const render = (outcome: CallOutcome): SendMessageResponse => ({
        message: agentMessage(outcome, call.tool, this.contextOf(caller, outcome, send.message.contextId)),
      });
      // Without the client's signal: a client that leaves is not a cancellation (README.md).
      const ran = await this.calls.run('a2a', call, send.message.messageId, render);
      if (ran.ok) return { ok: true, text: ran.resultText, replayed: ran.replayed };
      return { ok: false, failure: { kind: 'call', error: ran.error } };
    } finally {
      admitted.release();
    }
  }

  /**
   * `SendStreamingMessage`: the same checks and quotas (held until the stream
   * ends), then the call as a task, streamed (task-stream.service.ts), with the
   * message's push config attached to the task when it sent one.
   */
  async stream(caller: Caller, send: SendMessage, options: SendOptions): Promise<StreamStart> {
    if (send.message.taskId) {
      const answered = await this.tasks.answerQuestion(caller, send.message.taskId, send);
      return answered.ok ? this.streams.subscribe(caller, send.message.taskId, { evenIfEnded: true }) : answered;
    }
    const prepared = await this.prepare(caller, send, options);
    if (!prepared.ok) return prepared;
    const { call } = prepared;
    const push = await this.pushConfigOf(call, send.pushConfig, options.legacy);
    if (!push.ok) return push;
    const admitted = this.quotas.admitCalls(caller.agentId, caller.callerId);
    if (!admitted.ok) return { ok: false, failure: { kind: 'quota', refusal: admitted.refusal } };
    const started = this.streams.send(caller, call.messageId, () => this.start(caller, call, push.config));
    return { ok: true, run: (sink, signal) => started.run(sink, signal).finally(() => admitted.release()) };
  }

  /**
   * The message's push config (`configuration.taskPushNotificationConfig`), checked, its URL
   * through the SSRF guard, before the call is posted; its id, unless given, the task's, so that
   * the same message again replaces it rather than adding one.
   */
  private async pushConfigOf(
    call: CallRequest & { messageId: string },
    pushConfig: unknown,
    legacy = false,
  ): Promise<PushOf> {
    if (pushConfig === undefined) return { ok: true };
    const taskId = a2aTaskId({ message_id: call.messageId });
    return this.push.prepare(pushConfig, taskId, taskId, legacy);
  }

  /**
   * The call as a task (returnImmediately's path), and the push config sent with it attached: it
   * starts with the task's state as it is when it is stored, then hears each change.
   */
  private async start(
    caller: Caller,
    call: CallRequest & { messageId: string },
    pushConfig: PushConfigInput | undefined,
  ): Promise<TaskAnswer> {
    const started = await this.tasks.start(caller, call);
    if (!started.ok || !pushConfig) return started;
    const row = await this.tasks.rowOf(caller, pushConfig.taskId);
    const attached = row ? await this.push.attach(row, pushConfig) : undefined;
    if (attached && !attached.ok) return attached;
    return started;
  }

  /**
   * A blocking message's task, once it ended or asks (the spec: a blocking SendMessage waits for a
   * terminal or interrupted state, then answers the Task). A client that leaves stops the wait,
   * not the task: its push config tells the rest.
   */
  private async settled(caller: Caller, messageId: string, signal = new AbortController().signal): Promise<TaskAnswer> {
    const settled = await this.tasks.settled(caller, messageId, signal);
    if (settled === 'left') return { ok: false, failure: { kind: 'internal' } };
    if (settled === 'gone')
      return { ok: false, failure: { kind: 'task_not_found', taskId: a2aTaskId({ message_id: messageId }) } };
    return this.tasks.answer(caller, settled);
  }

  /** The call as the pipeline takes it, or why this caller may not make it. */
  private async prepare(caller: Caller, send: SendMessage, options: SendOptions): Promise<Prepared> {
    const catalogue = await this.catalogue.forAgent(caller.agentId);
    if (send.skill === undefined) return this.prepareConversational(caller, send, catalogue, options);
    const skill = send.skill;
    const tool = catalogue.byName.get(skill);
    // A skill this caller may not use is, to it, a skill that does not exist.
    if (tool && !callerMayUse(caller, tool))
      return { ok: false, failure: { kind: 'call', error: new ToolNotFoundError(skill) } };
    const missing = tool ? callerLacks(caller, tool) : [];
    if (missing.length) return { ok: false, failure: { kind: 'credential_unavailable', skill, missing } };
    const channelId = this.conversations.channelOf(send.message.contextId, caller.agentId, caller.callerId);
    return {
      ok: true,
      call: {
        agentId: caller.agentId,
        callerId: caller.callerId,
        tool: skill,
        arguments: send.arguments,
        messageId: chatMessageIdOf(caller.agentId, caller.callerId, send.message.messageId),
        ...(channelId && { channelId }),
        time: CallTime.accept({}, this.env),
        requestId: options.requestId,
        meta: tool && callerMeta(caller, tool),
      },
    };
  }

  /**
   * A message that names no skill: a conversational message, for the agent's
   * message handler, through the same call path as a skill (one call id,
   * quotas, deadline, webhooks), on the contextId's channel (so the agent sees
   * one history per context). Refused here, with no bus round trip, when the
   * agent registered no handler, or when the caller may call only named skills.
   */
  private async prepareConversational(
    caller: Caller,
    send: SendMessage,
    catalogue: AgentCatalogue,
    options: SendOptions,
  ): Promise<Prepared> {
    if (!catalogue.conversation)
      return unsupported('this agent answers only messages that name a skill in metadata.skill (see the agent card)');
    const refused = conversationRefusal(caller);
    if (refused) return unsupported(refused);
    const channelId = this.conversations.channelOf(send.message.contextId, caller.agentId, caller.callerId);
    const attachments = send.arguments[ATTACHMENTS_ARGUMENT];
    return {
      ok: true,
      call: {
        agentId: caller.agentId,
        callerId: caller.callerId,
        tool: '',
        // What a repeated messageId is compared with (and the audit trail records), and the files to resolve.
        arguments: { ...send.said, ...(attachments !== undefined && { [ATTACHMENTS_ARGUMENT]: attachments }) },
        said: send.said,
        messageId: chatMessageIdOf(caller.agentId, caller.callerId, send.message.messageId),
        ...(channelId && { channelId }),
        time: CallTime.accept({}, this.env),
        requestId: options.requestId,
        meta: conversationMeta(caller),
      },
    };
  }

  /**
   * The contextId to answer with: the one the message sent when it names this channel, else a
   * fresh handle. Both as of the call's posting, not of now: the answer is rendered again for a
   * repeated messageId (nothing keeps the text: ../idempotency/README.md, "A2A's messages claim
   * nothing"), and must come out the same.
   */
  private contextOf(caller: Caller, outcome: CallOutcome, sent: string | undefined): string {
    const asOf = outcome.postedAt ? Date.parse(outcome.postedAt) : Date.now();
    return this.conversations.renew(sent, outcome.channelId, caller.agentId, caller.callerId, asOf);
  }
}

type Prepared = { ok: true; call: CallRequest & { messageId: string } } | { ok: false; failure: A2aFailure };

type PushOf = { ok: true; config?: PushConfigInput } | { ok: false; failure: A2aFailure };

function unsupported(detail: string): { ok: false; failure: A2aFailure } {
  return { ok: false, failure: { kind: 'unsupported_operation', detail } };
}
