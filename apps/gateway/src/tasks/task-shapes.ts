import { CALL_ID_META_KEY, callIdOf, isAttemptsExhausted, protocolErrorOf, type AgentReply } from '@mcpgw/contracts';
import type { WebhookEvent } from '../webhooks/event-types';
import type { TaskEnd, TaskRow } from './tasks.store';

/**
 * A task's shapes on the wire, from its row: the 2026-07-28 Task and
 * DetailedTask, the 2025-11-25 Task, the end an agent's reply makes, and the
 * webhook event of its end. Pure functions; the service does the I/O.
 */

/** How long a task stays readable after it was made (`ttlMs`). */
export const TASK_TTL_MS = 3_600_000;
/** How often a client should poll `tasks/get` (`pollIntervalMs`). */
export const TASK_POLL_INTERVAL_MS = 500;

/** The 2025-11-25 `_meta` key that ties a message to its task. */
export const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** A 2025-11-25 Task: `ttl` and `pollInterval` (ms), a status message for a failure. */
export function legacyTask(row: TaskRow) {
  return {
    taskId: row.id,
    status: row.status,
    ...(row.status === 'failed' && row.error ? { statusMessage: String(row.error.message) } : {}),
    createdAt: row.created_at.toISOString(),
    lastUpdatedAt: row.updated_at.toISOString(),
    ttl: TASK_TTL_MS,
    pollInterval: TASK_POLL_INTERVAL_MS,
  };
}

/**
 * 2025-11-25 tasks/result of an ended task: the call's result with the
 * related-task `_meta` beside its own (`mcpgw/callId`), or the task's error.
 */
export function legacyResult(
  row: TaskRow,
): { ok: true; value: Record<string, unknown> } | { ok: false; error: { code: number; message: string } } {
  if (row.status === 'completed' && row.result) {
    const meta = { ...(row.result._meta as object), [RELATED_TASK]: { taskId: row.id } };
    return { ok: true, value: { ...row.result, _meta: meta } };
  }
  const error = (row.error ?? { code: -32603, message: `task ${row.status}` }) as { code: number; message: string };
  return { ok: false, error };
}

/** The agent's reply as the task's end: a result (a tool error too), or a protocol error (failed). */
export function endOf(reply: AgentReply): TaskEnd {
  const protocolError = protocolErrorOf(reply);
  if (protocolError) return { status: 'failed', error: protocolError };
  if (isAttemptsExhausted(reply))
    return { status: 'failed', error: { code: -32603, message: 'the agent could not run the call' } };
  return {
    status: 'completed',
    result: {
      content: reply.content,
      ...(reply.structured_content ? { structuredContent: reply.structured_content } : {}),
      ...(reply.is_error ? { isError: true } : {}),
      _meta: { [CALL_ID_META_KEY]: callIdOf(reply.in_reply_to) },
    },
  };
}

/** The Task fields every answer carries. */
export function envelope(row: TaskRow) {
  return {
    taskId: row.id,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    lastUpdatedAt: row.updated_at.toISOString(),
    ttlMs: TASK_TTL_MS,
    pollIntervalMs: TASK_POLL_INTERVAL_MS,
  };
}

/** tasks/get's DetailedTask: the result, the error or the open questions inlined. */
export function detailed(row: TaskRow) {
  return {
    ...envelope(row),
    ...(row.status === 'completed' && row.result ? { result: row.result } : {}),
    ...(row.status === 'failed' && row.error ? { error: row.error } : {}),
    ...(row.status === 'input_required' ? { inputRequests: row.input_requests } : {}),
  };
}

/** The webhook event of a task's end (../webhooks/event-types.ts): never its arguments or result text. */
export function taskEvent(type: 'task.completed' | 'task.failed' | 'task.cancelled', row: TaskRow): WebhookEvent {
  return {
    type,
    timestamp: new Date().toISOString(),
    data: {
      task_id: row.id,
      call_id: callIdOf(row.message_id),
      agent_id: row.agent_id,
      caller_id: row.principal,
      tool: row.tool,
      status: row.status,
      ...(row.status === 'completed' && row.result ? { is_error: row.result.isError === true } : {}),
      ...(row.status === 'failed' && row.error ? { error: row.error } : {}),
    },
  };
}
