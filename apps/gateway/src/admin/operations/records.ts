import { InvalidRequestError } from '@mcpgw/contracts';
import type { AgentsStore } from '../../agents/agents.store';
import type { TaskStatus } from '../../database/schema';
import { requireAgent } from './agents';

export {
  OperatorRecordsStore,
  type IdempotencyRecordDetail,
  type IdempotencyRecordView,
  type McpSessionView,
  type TaskDetail,
  type TaskView,
} from '../operator-records.store';

/**
 * What the gateway keeps of an agent's traffic, read for the operator (the admin
 * CLI's `session list`, `idempotency list|show`, `task list|show`, and the
 * management API): MCP sessions, idempotency records, tasks. Read only; the
 * newest first, `limit` of them (default 50, at most 500).
 */

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

/** The newest `limit`, checked: a whole number 1 to MAX_LIMIT. */
export function recordLimit(value: string | number | undefined): number {
  if (value === undefined || value === '') return DEFAULT_LIMIT;
  const limit = Number(value);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new InvalidRequestError(`limit: a whole number 1 to ${MAX_LIMIT}`);
  }
  return limit;
}

const TASK_STATUSES: readonly TaskStatus[] = ['working', 'input_required', 'completed', 'failed', 'cancelled'];

/** A task status filter, checked. */
export function taskStatus(value: string | undefined): TaskStatus | undefined {
  if (value === undefined || value === '') return undefined;
  if (!(TASK_STATUSES as readonly string[]).includes(value)) {
    throw new InvalidRequestError(`status: one of ${TASK_STATUSES.join(', ')}`);
  }
  return value as TaskStatus;
}

/** Every read names a known agent first, so a typo is a 404, not an empty list. */
export async function agentRecords<T>(agents: AgentsStore, agentId: string, read: () => Promise<T>): Promise<T> {
  await requireAgent(agents, agentId);
  return read();
}
