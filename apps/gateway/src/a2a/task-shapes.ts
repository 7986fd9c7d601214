import { callIdOf, type ContentItem } from '@mcpgw/contracts';
import type { TaskRow } from '../tasks/tasks.store';
import { toPart } from './answers';
import type { Part, TaskState } from './wire';

const STATES: Record<TaskRow['status'], TaskState> = {
  working: 'TASK_STATE_WORKING',
  input_required: 'TASK_STATE_INPUT_REQUIRED',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  cancelled: 'TASK_STATE_CANCELED',
};

export const TERMINAL_STATES: readonly TaskState[] = [
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
];

/** A task's A2A id: its call id (`call_<hex>`, from the chat_message id the row is named by), as on REST. */
export function a2aTaskId(row: Pick<TaskRow, 'message_id'>): string {
  return callIdOf(row.message_id);
}

export function a2aState(row: Pick<TaskRow, 'status'>): TaskState {
  return STATES[row.status];
}

/**
 * The row (an MCP task: ../tasks/) as an A2A Task: its state, a status message
 * for a failure, and once completed the result as one artifact (the content
 * items as parts, the structured result as a `data` part) named by the call id.
 */
export function a2aTask(row: TaskRow, contextId: string) {
  const id = a2aTaskId(row);
  const result = row.status === 'completed' ? row.result : null;
  const parts: Part[] = ((result?.content ?? []) as ContentItem[]).map(toPart);
  if (result?.structuredContent) parts.push({ data: result.structuredContent, mediaType: 'application/json' });
  const failure = row.status === 'failed' && row.error ? String(row.error.message) : undefined;
  return {
    id,
    contextId,
    status: {
      state: a2aState(row),
      timestamp: row.updated_at.toISOString(),
      ...(failure && {
        message: { messageId: `${id}-status`, contextId, taskId: id, role: 'ROLE_AGENT', parts: [{ text: failure }] },
      }),
    },
    artifacts: result ? [{ artifactId: id, name: row.tool, parts }] : [],
    history: [],
    metadata: { skill: row.tool, ...(result?.isError === true && { isError: true }) },
  };
}

export type A2aTask = ReturnType<typeof a2aTask>;
