import { Injectable } from '@nestjs/common';
import { messageIdOfCall } from '@mcpgw/contracts';
import { setTimeout as delay } from 'node:timers/promises';
import { CallError, IdempotencyKeyReusedError } from '../calls/call-errors';
import { CallPipeline } from '../calls/call-pipeline.service';
import type { CallRequest } from '../calls/call-shapes';
import { callFingerprint } from '../idempotency/fingerprint';
import { ConversationHandles } from '../sessions/conversation-handles';
import { TaskService } from '../tasks/tasks.service';
import { TaskStore, type TaskRow } from '../tasks/tasks.store';
import type { Caller } from '../auth/caller';
import type { A2aFailure } from './a2a-errors';
import type { SendMessage } from './send-message';
import { a2aTask, a2aState, INPUT_REQUEST_KEY, openQuestion, TERMINAL_STATES } from './task-shapes';

export type TaskAnswer = { ok: true; text: string } | { ok: false; failure: A2aFailure };

const DEFAULT_PAGE_SIZE = 50;
/** What an A2A client can answer, in MCP's terms: form elicitations (a data part). */
const A2A_CLIENT_CAPABILITIES = { elicitation: { form: {} } };
const MAX_PAGE_SIZE = 100;
/** How often a followed task's row is read again (as 2025-11-25 tasks/result polls: the row catches up on read). */
const POLL_MS = 250;

/** Where a followed task stopped: its row once it ended or asks, `gone` (purged), or `left` (the follower gave up). */
export type Settled = TaskRow | 'gone' | 'left';

/**
 * A2A tasks are MCP tasks (../tasks/README.md): one row in PostgreSQL per call,
 * named by its chat_message (the A2A id is the call id, `call_<hex>`, as on
 * REST), followed on the bus, readable and cancellable from any replica, and
 * only by the caller that made it: another caller's task is unknown (-32001).
 */
@Injectable()
export class A2aTasks {
  constructor(
    private readonly pipeline: CallPipeline,
    private readonly tasks: TaskService,
    private readonly store: TaskStore,
    private readonly conversations: ConversationHandles,
  ) {}

  /**
   * Post the call without waiting and make its task (`returnImmediately`). The
   * same message again (its chat_message id derives from the messageId) joins
   * the first posting and answers the task already made; with another skill or
   * other arguments it is refused, as a blocking message is: the task's row
   * keeps the call's fingerprint, and its posting carries it, which the message
   * service compares against a blocking message's
   * (../idempotency/README.md, "The message service checks too").
   */
  async start(caller: Caller, call: CallRequest & { messageId: string }): Promise<TaskAnswer> {
    // The chat_message id is the messageId's key ref: the posting holds the key (one key space with MCP and REST).
    const idempotency = {
      key: call.messageId,
      fingerprint: callFingerprint(call.tool, call.arguments),
      ref: call.messageId,
    };
    const existing = await this.tasks.current(call.messageId, caller.agentId, caller.callerId);
    if (existing) {
      // Not posted again: a second delivery, past JetStream's de-duplication window, could run it twice.
      if (existing.fingerprint && !existing.fingerprint.equals(idempotency.fingerprint))
        return { ok: false, failure: { kind: 'call', error: new IdempotencyKeyReusedError(call.messageId) } };
      return this.answer(caller, existing);
    }
    try {
      // An A2A client answers forms (a message with a data part naming the task); the agent's
      // other questions (sampling, roots) have no A2A form and are refused to it at once.
      const { ref } = await this.tasks.postAsTask(call, A2A_CLIENT_CAPABILITIES, true, idempotency);
      // The call was posted before its task watched it: a question asked in between went unheard.
      // The agent publishes its open questions again (after the task's subscription, on the same connection).
      this.pipeline.askAgain(call.agentId, ref.messageId);
    } catch (error) {
      if (error instanceof CallError) return { ok: false, failure: { kind: 'call', error } };
      // Two requests with the same message raced to make its task: the row is the other's.
      const raced = await this.tasks.current(call.messageId, caller.agentId, caller.callerId);
      if (raced) return this.answer(caller, raced);
      throw error;
    }
    return this.get(caller, call.messageId, { byMessage: true });
  }

  async get(caller: Caller, taskId: unknown, { byMessage = false } = {}): Promise<TaskAnswer> {
    const row = byMessage
      ? await this.tasks.current(String(taskId), caller.agentId, caller.callerId)
      : await this.rowOf(caller, taskId);
    return row ? this.answer(caller, row) : notFound(taskId);
  }

  /** The caller's task named by its A2A id, as it is now; undefined for any other id. */
  async rowOf(caller: Caller, taskId: unknown): Promise<TaskRow | undefined> {
    const messageId = typeof taskId === 'string' ? messageIdOfCall(taskId) : undefined;
    return messageId ? this.tasks.current(messageId, caller.agentId, caller.callerId) : undefined;
  }

  /** Cancel a live task (the agent hears it on the bus); an ended one cannot be (-32002). */
  async cancel(caller: Caller, taskId: unknown): Promise<TaskAnswer> {
    const row = await this.rowOf(caller, taskId);
    if (!row) return notFound(taskId);
    if (TERMINAL_STATES.includes(a2aState(row)))
      return { ok: false, failure: { kind: 'task_not_cancelable', taskId: String(taskId), state: a2aState(row) } };
    await this.tasks.cancel(row.id, caller.agentId, caller.callerId);
    return this.get(caller, taskId);
  }

  /**
   * A message naming a task answers the question the task waits on (its
   * `metadata.inputRequestKey`, else the first open one): its data part is the
   * form's content (`metadata.action` `decline` or `cancel` refuses it). The
   * answer goes to the agent as MCP's tasks/update sends it; the task is answered.
   */
  async answerQuestion(caller: Caller, taskId: string, send: SendMessage): Promise<TaskAnswer> {
    const row = await this.rowOf(caller, taskId);
    if (!row) return notFound(taskId);
    if (row.status !== 'input_required')
      return {
        ok: false,
        failure: { kind: 'unsupported_operation', detail: `task ${taskId} is not waiting for input` },
      };
    const metadata = send.message.metadata ?? {};
    const key = typeof metadata[INPUT_REQUEST_KEY] === 'string' ? metadata[INPUT_REQUEST_KEY] : openQuestion(row)?.key;
    if (!key || !Object.hasOwn(row.input_requests, key)) return invalid(`the task asks no question ${String(key)}`);
    const action = metadata.action === 'decline' || metadata.action === 'cancel' ? metadata.action : 'accept';
    const answer = action === 'accept' ? { action, content: send.arguments } : { action };
    const updated = await this.tasks.update(row.id, { [key]: answer }, caller.agentId, caller.callerId);
    if (!updated.ok) return invalid(updated.message);
    return this.get(caller, taskId);
  }

  /**
   * Follow the caller's task until it stops for the caller: ended, or asking (the spec's terminal
   * and interrupted states, where a blocking SendMessage answers and a stream ends). The row is
   * read every POLL_MS on this replica, whichever made the task; a read catches up a task whose
   * follower died, and past the call's deadline it has failed.
   */
  async settled(caller: Caller, messageId: string, signal: AbortSignal): Promise<Settled> {
    while (!signal.aborted) {
      const row = await this.tasks.current(messageId, caller.agentId, caller.callerId);
      if (!row) return 'gone';
      if (TERMINAL_STATES.includes(a2aState(row)) || row.status === 'input_required') return row;
      await delay(POLL_MS, undefined, { signal }).catch(() => undefined);
    }
    return 'left';
  }

  /** The caller's tasks of this agent, oldest first, a page at a time (`pageToken`: where the next page starts). */
  async list(caller: Caller, params: { pageSize?: unknown; pageToken?: unknown }): Promise<TaskAnswer> {
    const size = params.pageSize === undefined || params.pageSize === 0 ? DEFAULT_PAGE_SIZE : Number(params.pageSize);
    if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE)
      return invalid(`pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}`);
    const offset = params.pageToken ? Number(Buffer.from(String(params.pageToken), 'base64url').toString()) : 0;
    if (!Number.isInteger(offset) || offset < 0) return invalid('pageToken is not one this server gave');
    const rows = await this.store.list(caller.agentId, caller.callerId, size + 1, offset);
    const page = rows.slice(0, size);
    const next = rows.length > size ? Buffer.from(String(offset + size)).toString('base64url') : '';
    const body = {
      tasks: page.map((row) => a2aTask(row, this.contextOf(row))),
      nextPageToken: next,
      pageSize: page.length,
      totalSize: offset + page.length + (next ? 1 : 0),
    };
    return { ok: true, text: JSON.stringify(body) };
  }

  answer(caller: Caller, row: TaskRow): TaskAnswer {
    return { ok: true, text: JSON.stringify(a2aTask(row, this.contextOf(row))) };
  }

  /**
   * The task's channel as a conversation handle, the same on every read (minted as of the task's
   * creation, for its agent and caller): GetTask's, the stream's and the push notifications' alike.
   */
  contextOf(row: TaskRow): string {
    return this.conversations.mint(row.channel_id, row.agent_id, row.principal, row.created_at.getTime());
  }
}

function notFound(taskId: unknown): TaskAnswer {
  return { ok: false, failure: { kind: 'task_not_found', taskId: String(taskId) } };
}

function invalid(detail: string): TaskAnswer {
  return { ok: false, failure: { kind: 'invalid_params', detail } };
}
