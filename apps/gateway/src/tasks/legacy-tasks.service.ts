import { Injectable } from '@nestjs/common';
import { setTimeout as delay } from 'node:timers/promises';
import type { CallRequest } from '../calls/call-shapes';
import { legacyResult, legacyTask, TASK_POLL_INTERVAL_MS } from './task-shapes';
import { TaskService, unknown, type TaskAnswer } from './tasks.service';
import { TERMINAL, TaskStore } from './tasks.store';

/** The most tasks one tasks/list reads (then paged). */
const LIST_MAX = 1_000;

/**
 * Tasks in their 2025-11-25 shape (sessions): `params.task` on tools/call,
 * `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`. The same rows and
 * followers as the 2026-07-28 shape (`TaskService`), answered as that
 * revision's `Task` (README.md beside this file).
 */
@Injectable()
export class LegacyTasks {
  constructor(
    private readonly tasks: TaskService,
    private readonly store: TaskStore,
  ) {}

  /**
   * `params.task`: check the call, post it without waiting, and answer
   * `{task}` at once. The client cannot be asked anything during it (this
   * shape's questions are not built): the agent hears so at once.
   */
  async runAsTask(call: CallRequest): Promise<Record<string, unknown>> {
    const { task } = await this.tasks.postAsTask(call, {}, false);
    // CreateTaskResult of this revision: `{task}`.
    return { task: legacyTask((await this.store.get(task.taskId as string, call.agentId, call.callerId))!) };
  }

  async get(taskId: unknown, agentId: string, principal: string): Promise<TaskAnswer> {
    const row = await this.tasks.current(taskId, agentId, principal);
    return row ? { ok: true, value: legacyTask(row) } : unknown(taskId);
  }

  /**
   * tasks/result: blocks until the task ends (or the client leaves), then the
   * call's result with the related-task `_meta`, or its error.
   */
  async result(
    taskId: unknown,
    agentId: string,
    principal: string,
    signal?: AbortSignal,
  ): Promise<TaskAnswer | { ok: false; error: { code: number; message: string } }> {
    let row = await this.tasks.read(taskId, agentId, principal);
    if (!row) return unknown(taskId);
    while (!TERMINAL.includes(row.status) && !signal?.aborted) {
      await delay(TASK_POLL_INTERVAL_MS);
      const now = await this.tasks.current(row.id, agentId, principal);
      if (!now) return unknown(taskId);
      row = now;
    }
    return legacyResult(row);
  }

  async list(agentId: string, principal: string): Promise<Record<string, unknown>[]> {
    return (await this.store.list(agentId, principal, LIST_MAX)).map(legacyTask);
  }

  /** Cancels a live task; a terminal one cannot be (-32602). */
  async cancel(taskId: unknown, agentId: string, principal: string): Promise<TaskAnswer> {
    const row = await this.tasks.read(taskId, agentId, principal);
    if (!row) return unknown(taskId);
    if (TERMINAL.includes(row.status)) return { ok: false, message: `Task ${row.id} is already ${row.status}` };
    await this.tasks.cancel(row.id, agentId, principal);
    return { ok: true, value: legacyTask((await this.tasks.read(row.id, agentId, principal)) ?? row) };
  }
}
