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
  const statusMessage = (parts: Part[], metadata?: Record<string, unknown>) => ({
    message: {
      messageId: `${id}-status`,
      contextId,
      taskId: id,
      role: 'ROLE_AGENT',
      parts,
      ...(metadata && { metadata }),
    },
  });
  const question = row.status === 'input_required' ? openQuestion(row) : undefined;
  return {
    id,
    contextId,
    status: {
      state: a2aState(row),
      timestamp: row.updated_at.toISOString(),
      ...(failure && statusMessage([{ text: failure }])),
      ...(question && statusMessage(question.parts, { [INPUT_REQUEST_KEY]: question.key })),
    },
    // A conversational message's task has no skill (its tool is ''): its artifact is the answer.
    artifacts: result ? [{ artifactId: id, name: row.tool || 'answer', parts }] : [],
    history: [],
    metadata: { ...(row.tool && { skill: row.tool }), ...(result?.isError === true && { isError: true }) },
  };
}

export type A2aTask = ReturnType<typeof a2aTask>;

/** Where a question's key is, in the status message that asks it and (optionally) in the message that answers it. */
export const INPUT_REQUEST_KEY = 'inputRequestKey';

/**
 * The agent's first open question (an elicitation: A2A clients answer forms),
 * as the status message shows it: its text, and a `data` part with the schema
 * the answer's `data` part must follow.
 */
export function openQuestion(row: Pick<TaskRow, 'input_requests'>): { key: string; parts: Part[] } | undefined {
  const [entry] = Object.entries(row.input_requests);
  if (!entry) return undefined;
  const [key, question] = entry as [string, { method?: string; params?: Record<string, unknown> }];
  const params = question.params ?? {};
  const text = typeof params.message === 'string' ? params.message : `The agent asks (${question.method})`;
  return {
    key,
    parts: [{ text }, { data: { method: question.method, ...params }, mediaType: 'application/json' }],
  };
}
