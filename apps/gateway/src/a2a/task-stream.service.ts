import { Injectable } from '@nestjs/common';
import { BusClient } from '@mcpgw/bus';
import type { CallEvent } from '@mcpgw/contracts';
import { randomUUID } from 'node:crypto';
import { CallWatch } from '../calls/call-watch';
import type { Caller } from '../auth/caller';
import type { A2aFailure } from './a2a-errors';
import { A2aTasks, type TaskAnswer } from './a2a-tasks.service';
import { a2aState, a2aTask, TERMINAL_STATES, type A2aTask } from './task-shapes';

/** One `StreamResponse` (`{task}`, `{statusUpdate}`, `{artifactUpdate}`), to write as an SSE event. */
export type StreamSink = (response: Record<string, unknown>) => void;

/** Runs a stream to its end; a failure after the stream began is its last event. */
export type StreamRun = (sink: StreamSink, signal: AbortSignal) => Promise<A2aFailure | undefined>;

/** A stream to run, or why there is none (answered as a plain error, before any event). */
export type StreamStart = { ok: true; run: StreamRun } | { ok: false; failure: A2aFailure };

/**
 * `SendStreamingMessage` and `SubscribeToTask`: the task first, then the agent's
 * progress and log events as `statusUpdate`s (TASK_STATE_WORKING, the progress
 * message as the status message, the numbers or the log line in metadata) in
 * the order they come, then, once the row ends, the result as an
 * `artifactUpdate` and the final `statusUpdate`, and the stream ends; or, when
 * the agent asks, a `TASK_STATE_INPUT_REQUIRED` statusUpdate with the question,
 * and the stream ends there (a message naming the task answers it). The
 * events are watched before the call is posted (its chat_message id is known
 * in advance), so none falls before the stream.
 */
@Injectable()
export class A2aTaskStreams {
  constructor(
    private readonly bus: BusClient,
    private readonly tasks: A2aTasks,
  ) {}

  /**
   * Stream the call's task (chat_message `messageId`), which `start` makes (returnImmediately's
   * path, with the message's push config if it sent one) once its events are watched.
   */
  send(caller: Caller, messageId: string, start: () => Promise<TaskAnswer>): { ok: true; run: StreamRun } {
    return { ok: true, run: (sink, signal) => this.follow(caller, messageId, sink, signal, start) };
  }

  /** Stream a live task of the caller's; an ended one cannot be subscribed to (UnsupportedOperationError). */
  async subscribe(caller: Caller, taskId: unknown, { evenIfEnded = false } = {}): Promise<StreamStart> {
    const row = await this.tasks.rowOf(caller, taskId);
    if (!row) return { ok: false, failure: { kind: 'task_not_found', taskId: String(taskId) } };
    if (!evenIfEnded && TERMINAL_STATES.includes(a2aState(row)))
      return { ok: false, failure: { kind: 'unsupported_operation', detail: `task ${String(taskId)} has ended` } };
    const known = this.tasks.answer(caller, row);
    return { ok: true, run: (sink, signal) => this.follow(caller, row.message_id, sink, signal, async () => known) };
  }

  private async follow(
    caller: Caller,
    messageId: string,
    sink: StreamSink,
    signal: AbortSignal,
    first: () => Promise<TaskAnswer>,
  ): Promise<A2aFailure | undefined> {
    const early: CallEvent[] = [];
    let task: A2aTask | undefined;
    const relay = (event: CallEvent) => {
      if (!task) return void early.push(event);
      const update = statusUpdate(task, event);
      if (update) sink(update);
    };
    const watch = new CallWatch(this.bus, caller.agentId, messageId, relay);
    try {
      const answer = await first();
      if (!answer.ok) return answer.failure;
      task = JSON.parse(answer.text) as A2aTask;
      sink({ task });
      for (const event of early.splice(0)) relay(event);
      // Ended, or the agent asks: the stream ends there (an interrupted state); the answer is a new message naming the task.
      const settled = await this.tasks.settled(caller, messageId, signal);
      if (settled === 'left') return undefined;
      if (settled === 'gone') return { kind: 'task_not_found', taskId: task.id };
      return end(sink, a2aTask(settled, task.contextId));
    } finally {
      watch.stop();
    }
  }
}

function end(sink: StreamSink, task: A2aTask): undefined {
  const { id: taskId, contextId } = task;
  for (const artifact of task.artifacts)
    sink({ artifactUpdate: { taskId, contextId, artifact, append: false, lastChunk: true } });
  sink({ statusUpdate: { taskId, contextId, status: task.status, metadata: task.metadata } });
  return undefined;
}

/** A progress or log event as a working status update; nothing for the others (questions are input-required's). */
function statusUpdate(task: A2aTask, event: CallEvent): Record<string, unknown> | undefined {
  const ids = { taskId: task.id, contextId: task.contextId };
  const update = (text: string | undefined, metadata: Record<string, unknown>) => ({
    statusUpdate: {
      ...ids,
      status: {
        state: 'TASK_STATE_WORKING',
        timestamp: new Date().toISOString(),
        ...(text && { message: { messageId: randomUUID(), ...ids, role: 'ROLE_AGENT', parts: [{ text }] } }),
      },
      metadata,
    },
  });
  if (event.type === 'progress')
    return update(event.message, {
      progress: event.progress,
      ...(event.total !== undefined && { total: event.total }),
    });
  if (event.type === 'log') {
    const log = { level: event.level, ...(event.logger && { logger: event.logger }), data: event.data };
    return update(undefined, { log });
  }
  return undefined;
}

/** A controller's answer for a stream: the stream to write, or the failure to answer instead. */
export function streamed(start: StreamStart): { ok: true; stream: StreamRun } | { ok: false; failure: A2aFailure } {
  return start.ok ? { ok: true, stream: start.run } : start;
}
