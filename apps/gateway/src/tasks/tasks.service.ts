import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { BusPattern, GatewayNotices, waitRequestTimeout, type CallEvent } from '@mcpgw/contracts';
import { BusClient } from '@mcpgw/bus';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { CallPipeline } from '../calls/call-pipeline.service';
import type { CallRef, CallRequest, PreparedCall } from '../calls/call-shapes';
import { CallWatch } from '../calls/call-watch';
import { CallCancellation } from '../cancellation/call-cancellation.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import type { GatewayDb } from '../database/schema';
import { WebhookOutbox } from '../webhooks/webhook-outbox.service';
import { questionRefusal } from './task-questions';
import { TERMINAL, TaskStore, type TaskEnd, type TaskRow } from './tasks.store';
import { TASK_TTL_MS, detailed, endOf, envelope, legacyTask, taskEvent } from './task-shapes';

/** The extension's id, in `capabilities.extensions` of the server and of the client. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/**
 * How long a new call of a task tool runs before it becomes a task: a reply
 * by then is a plain result, a question an MRTR round (the tool gathers its
 * input first), and otherwise the client gets CreateTaskResult.
 */
export const TASK_AFTER_MS = 500;
/** How many live tasks a replica adopts at start (left behind by a replica that stopped). */
const ADOPT_AT_START = 200;

/** A call already on the bus, becoming a task. */
export interface TaskCall {
  /** The task's id when the surface names it (REST: the call's message id, so the call id finds it); else a new one. */
  id?: string;
  agentId: string;
  principal: string;
  tool: string;
  channelId: string;
  messageId: string;
  /** When the agent's time for the call ends (fixed when it was posted). */
  endsAt: number;
  /** The client's capabilities: the agent may not ask it anything else. */
  capabilities: Record<string, unknown>;
  /** A keyed call's fingerprint, kept on the row (an A2A message's: `../a2a/a2a-tasks.service.ts`). */
  fingerprint?: Buffer;
}

/**
 * Told of a task's changes while its row says `push` (an A2A push config exists: `../a2a/push/`),
 * in the transaction of the change, so that what it writes commits with the change or not at all.
 */
export interface TaskObserver {
  changed(executor: GatewayDb, row: TaskRow): Promise<void>;
}

/** The answer to a tasks/* request, or why there is none (-32602). */
export type TaskAnswer = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/** Whether a 2026-07-28 request's client declared the tasks extension. */
export function declaresTasks(capabilities: Record<string, unknown> | undefined): boolean {
  const extensions = capabilities?.extensions;
  return (
    typeof extensions === 'object' &&
    extensions !== null &&
    (extensions as Record<string, unknown>)[TASKS_EXTENSION] !== undefined
  );
}

/**
 * Tasks (MCP io.modelcontextprotocol/tasks, SEP-2663): a tools/call that runs
 * on the bus like any call while the client polls. The row in PostgreSQL is
 * the task; the replica that made it follows the call (its questions, its
 * reply) and writes what happens into the row; any replica answers tasks/get
 * from the row, asking the message service for a reply the follower did not
 * store (it died). README.md beside this file has the design.
 */
@Injectable()
export class TaskService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(TaskService.name);
  private readonly following = new Set<string>();
  private stopping = false;
  private purgeTimer?: NodeJS.Timeout;
  private observer?: TaskObserver;

  constructor(
    private readonly store: TaskStore,
    private readonly bus: BusClient,
    private readonly pipeline: CallPipeline,
    private readonly cancellation: CallCancellation,
    private readonly outbox: WebhookOutbox,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  onModuleInit(): void {
    this.purgeTimer = setInterval(() => void this.store.purge().catch(() => undefined), 600_000).unref();
    // Live tasks whose follower stopped with its replica: follow them again (ending a task is once, whoever does it).
    void this.store
      .live(ADOPT_AT_START)
      .then((rows) => rows.forEach((row) => void this.follow(row)))
      .catch((error: Error) => this.logger.warn({ msg: 'could not adopt live tasks', error: error.message }));
  }

  onApplicationShutdown(): void {
    this.stopping = true;
    clearInterval(this.purgeTimer);
  }

  /** Store the task (a tasks/get right after finds it), follow its call here, and answer CreateTaskResult. */
  async create(call: TaskCall): Promise<Record<string, unknown>> {
    // Watch the call's questions before the row exists (kept until it does), so none falls between the two.
    const known: { row?: TaskRow } = {};
    const early: CallEvent[] = [];
    const watch = new CallWatch(this.bus, call.agentId, call.messageId, (event) =>
      known.row ? void this.heard(known.row, event, call.capabilities) : early.push(event),
    );
    let row: TaskRow;
    try {
      row = await this.store.create({
        id: call.id ?? randomUUID(),
        agentId: call.agentId,
        principal: call.principal,
        tool: call.tool,
        channelId: call.channelId,
        messageId: call.messageId,
        endsAt: new Date(call.endsAt),
        ttlMs: TASK_TTL_MS,
        fingerprint: call.fingerprint,
      });
    } catch (error) {
      watch.stop();
      throw error;
    }
    known.row = row;
    for (const event of early) void this.heard(row, event, call.capabilities);
    void this.follow(row, call.capabilities, watch);
    return { resultType: 'task', ...envelope(row) };
  }

  /**
   * Post a call without waiting for it and make its task: for the surfaces
   * whose client asks for a task up front (REST `respond-async`, A2A
   * `returnImmediately`, 2025-11-25 `params.task`). `named`: the task's id is
   * the call's message id (the call id finds it), else a new one. The
   * client's capabilities decide which of the agent's questions it is asked.
   * `idempotency`: a keyed call's key and fingerprint, posted with it and kept on the task's row.
   */
  async postAsTask(
    call: CallRequest,
    capabilities: Record<string, unknown>,
    named: boolean,
    idempotency?: PreparedCall['idempotency'],
  ): Promise<{ task: Record<string, unknown>; ref: CallRef }> {
    const ref = await this.pipeline.post({ ...(await this.pipeline.prepare(call)), idempotency }, call.time);
    const task = await this.create({
      // Named by the call's own message, even when its posting joined another holding its key.
      ...(named && { id: call.messageId ?? ref.messageId }),
      agentId: call.agentId,
      principal: call.callerId,
      tool: call.tool,
      channelId: ref.channelId,
      messageId: ref.messageId,
      endsAt: Date.now() + call.time.limit.remainingMs(),
      capabilities,
      fingerprint: idempotency?.fingerprint,
    });
    return { task, ref };
  }

  /** A new channel for a task's call, so the task knows where its reply will be before it is posted. */
  async channelFor(agentId: string): Promise<string> {
    return (await this.bus.request(BusPattern.CreateChannel, { agent_id: agentId })).id;
  }

  /** The caller's own tasks among `taskIds` (a listen stream may watch only those). */
  async owned(taskIds: string[], agentId: string, principal: string): Promise<string[]> {
    const found = await Promise.all(taskIds.map((id) => this.read(id, agentId, principal)));
    return found.filter((row): row is TaskRow => !!row).map((row) => row.id);
  }

  /** A task's DetailedTask for `notifications/tasks` (the stream was checked to be its caller's). */
  async detailedFor(taskId: string, agentId: string): Promise<Record<string, unknown> | undefined> {
    const row = await this.store.byId(taskId, agentId);
    return row && detailed(row);
  }

  /** A task's 2025-11-25 Task and whose it is, for `notifications/tasks/status` on its caller's session streams. */
  async legacyStatusFor(
    taskId: string,
    agentId: string,
  ): Promise<{ principal: string; task: Record<string, unknown> } | undefined> {
    const row = await this.store.byId(taskId, agentId);
    return row && { principal: row.principal, task: legacyTask(row) };
  }

  /** The observer of the tasks that ask for it (`push`): one, the A2A push configs. */
  observe(observer: TaskObserver): void {
    this.observer = observer;
  }

  /** Tell every replica the task changed: its listen streams send `notifications/tasks` (../mcp/subscriptions/). */
  private changed(row: Pick<TaskRow, 'id' | 'agent_id'>): void {
    this.bus.publish(GatewayNotices.at(row.agent_id), { kind: 'task_status', task_id: row.id });
  }

  async get(taskId: unknown, agentId: string, principal: string): Promise<TaskAnswer> {
    const row = await this.current(taskId, agentId, principal);
    if (!row) return unknown(taskId);
    return { ok: true, value: { resultType: 'complete', ...detailed(row) } };
  }

  /** The caller's task as it is now (a reply no follower stored ends it here), for any surface to shape. */
  async current(taskId: unknown, agentId: string, principal: string): Promise<TaskRow | undefined> {
    const row = await this.read(taskId, agentId, principal);
    if (!row || TERMINAL.includes(row.status)) return row;
    return (await this.catchUp(row)) ?? row;
  }

  /** Answer the open questions the client answered (others are ignored); the task's state shows on tasks/get. */
  async update(taskId: unknown, inputResponses: unknown, agentId: string, principal: string): Promise<TaskAnswer> {
    if (!isResultMap(inputResponses))
      return { ok: false, message: 'params.inputResponses must map each input request key to its result (an object)' };
    const row = await this.read(taskId, agentId, principal);
    if (!row) return unknown(taskId);
    const answered = Object.keys(inputResponses).filter((key) => Object.hasOwn(row.input_requests, key));
    if (answered.length) {
      // The row first: a tasks/get after this ack no longer shows them, even if the agent is slow to go on.
      await this.store.transaction(async (tx) => {
        const now = await this.store.answered(tx, row.id, answered);
        if (now?.push) await this.observer?.changed(tx, now);
      });
      this.changed(row);
      for (const key of answered)
        this.pipeline.answerInput(row.agent_id, row.message_id, { key, result: inputResponses[key] });
    }
    return { ok: true, value: { resultType: 'complete' } };
  }

  /** Cancel a live task (a terminal one is left as it is: the same ack) and tell the agent to stop. */
  async cancel(taskId: unknown, agentId: string, principal: string): Promise<TaskAnswer> {
    const row = await this.read(taskId, agentId, principal);
    if (!row) return unknown(taskId);
    if (!TERMINAL.includes(row.status)) {
      await this.end(row, { status: 'cancelled', error: { code: -32800, message: 'Task cancelled by the client' } });
      this.cancellation.stopMessage(row.agent_id, row.message_id, 'task cancelled by the client');
    }
    return { ok: true, value: { resultType: 'complete' } };
  }

  /** The caller's task as stored (no catching up); undefined for another caller's, or an id that is none. */
  read(taskId: unknown, agentId: string, principal: string): Promise<TaskRow | undefined> {
    if (typeof taskId !== 'string' || !UUID.test(taskId)) return Promise.resolve(undefined);
    return this.store.get(taskId, agentId, principal);
  }

  /**
   * A live task, read on any replica: its reply may be stored while nobody
   * followed it (the replica that made it stopped). Ask the message service,
   * without waiting; past the agent's deadline with no reply, the task failed.
   */
  private async catchUp(row: TaskRow): Promise<TaskRow | undefined> {
    try {
      const waited = await this.bus.request(
        BusPattern.WaitForReply,
        { channel_id: row.channel_id, message_id: row.message_id, timeout_ms: 0 },
        waitRequestTimeout(0),
      );
      if (waited.status === 'replied') return (await this.end(row, endOf(waited.reply))) ?? (await this.reread(row));
    } catch (error) {
      this.logger.warn({
        msg: 'tasks/get could not ask for the reply',
        task_id: row.id,
        error: (error as Error).message,
      });
      return undefined;
    }
    if (row.ends_at.getTime() < Date.now())
      return (await this.end(row, { status: 'failed', error: TIMED_OUT })) ?? (await this.reread(row));
    return undefined;
  }

  private reread(row: TaskRow): Promise<TaskRow | undefined> {
    return this.store.get(row.id, row.agent_id, row.principal);
  }

  /**
   * Follow a live task on this replica: the agent's questions go into the row
   * (or are refused when the client cannot answer them), its reply ends the
   * task. Waits in slices; stops when the task ended elsewhere.
   */
  private async follow(row: TaskRow, capabilities?: Record<string, unknown>, watching?: CallWatch): Promise<void> {
    if (this.following.has(row.id)) return watching?.stop();
    this.following.add(row.id);
    const watch =
      watching ??
      new CallWatch(this.bus, row.agent_id, row.message_id, (event) => void this.heard(row, event, capabilities));
    try {
      // Taken over: questions asked while no replica followed went unheard; ask again once the watch is in place.
      if (!watching) await this.bus.flush().then(() => this.pipeline.askAgain(row.agent_id, row.message_id));
      for (;;) {
        const remaining = row.ends_at.getTime() - Date.now();
        if (remaining <= 0) {
          await this.end(row, { status: 'failed', error: TIMED_OUT });
          return;
        }
        const waitMs = Math.min(remaining, this.env.CALL_WAIT_SLICE_MS);
        try {
          const waited = await this.bus.request(
            BusPattern.WaitForReply,
            { channel_id: row.channel_id, message_id: row.message_id, timeout_ms: waitMs },
            waitRequestTimeout(waitMs),
          );
          if (waited.status === 'replied') {
            await this.end(row, endOf(waited.reply));
            return;
          }
        } catch (error) {
          if (this.stopping) return;
          this.logger.warn({
            msg: 'task wait failed; waiting again',
            task_id: row.id,
            error: (error as Error).message,
          });
          await delay(1_000);
        }
        if (this.stopping) return;
        const now = await this.reread(row);
        if (!now || TERMINAL.includes(now.status)) return;
      }
    } catch (error) {
      this.logger.error({ msg: 'task follower failed', task_id: row.id, error: (error as Error).message });
    } finally {
      watch.stop();
      this.following.delete(row.id);
    }
  }

  private async heard(row: TaskRow, event: CallEvent, capabilities?: Record<string, unknown>): Promise<void> {
    if (event.type !== 'input_request') return;
    const refusal = questionRefusal(event.method, event.params, capabilities);
    if (refusal) return this.pipeline.answerInput(row.agent_id, row.message_id, { key: event.key, error: refusal });
    try {
      await this.store.transaction(async (tx) => {
        const asked = await this.store.ask(tx, row.id, event.key, { method: event.method, params: event.params });
        if (asked?.push) await this.observer?.changed(tx, asked);
      });
      this.changed(row);
    } catch (error) {
      this.logger.error({ msg: 'could not store a task question', task_id: row.id, error: (error as Error).message });
    }
  }

  /**
   * End the task once: the status and, when the agent has a webhook for it,
   * its `task.*` event, in one transaction. Undefined when it had ended already.
   */
  private async end(row: TaskRow, end: TaskEnd): Promise<TaskRow | undefined> {
    const type = `task.${end.status}` as const;
    const wanted = this.outbox.wants(row.agent_id, type, row.principal);
    const ended = await this.store.transaction(async (tx) => {
      const done = await this.store.end(tx, row.id, end);
      if (done && wanted) await this.outbox.record(tx, row.agent_id, row.principal, taskEvent(type, done));
      if (done?.push) await this.observer?.changed(tx, done);
      return done;
    });
    if (ended) this.changed(ended);
    return ended;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TIMED_OUT = { code: -32003, message: 'Agent reply timeout' };

export function unknown(taskId: unknown): TaskAnswer {
  return { ok: false, message: `Unknown task: ${typeof taskId === 'string' ? taskId : String(taskId)}` };
}

function isResultMap(value: unknown): value is Record<string, Record<string, unknown>> {
  const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
  return isObject(value) && Object.values(value as object).every(isObject);
}
