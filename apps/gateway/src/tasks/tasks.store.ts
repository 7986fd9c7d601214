import { Injectable } from '@nestjs/common';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import type { GatewayDb, TaskStatus } from '../database/schema';

export const TERMINAL: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];

export interface TaskRow {
  id: string;
  agent_id: string;
  principal: string;
  tool: string;
  channel_id: string;
  message_id: string;
  status: TaskStatus;
  input_requests: Record<string, unknown>;
  result: Record<string, unknown> | null;
  error: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  ends_at: Date;
  expires_at: Date;
  /** It has (had) an A2A push config: its changes are reported (`TaskService.observe`). */
  push: boolean;
  /** A keyed call's fingerprint (an A2A message's), else null. */
  fingerprint: Buffer | null;
}

export interface NewTask {
  id: string;
  agentId: string;
  principal: string;
  tool: string;
  channelId: string;
  messageId: string;
  endsAt: Date;
  ttlMs: number;
  fingerprint?: Buffer;
}

/** What ends a task: its status and the result or error it keeps. */
export interface TaskEnd {
  status: 'completed' | 'failed' | 'cancelled';
  result?: Record<string, unknown>;
  error?: Record<string, unknown>;
}

/**
 * The tasks' rows (gateway schema). Every change is one statement that names
 * the statuses it may leave, so two replicas racing (a follower storing the
 * result, a tasks/cancel) end a task once: the one whose UPDATE returns the
 * row reports it (tasks/README.md).
 */
@Injectable()
export class TaskStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  async create(task: NewTask): Promise<TaskRow> {
    return (await this.db
      .insertInto('mcp_tasks')
      .values({
        id: task.id,
        agent_id: task.agentId,
        principal: task.principal,
        tool: task.tool,
        channel_id: task.channelId,
        message_id: task.messageId,
        status: 'working',
        ends_at: task.endsAt,
        fingerprint: task.fingerprint ?? null,
        expires_at: sql<Date>`now() + ${sql.lit(task.ttlMs)} * interval '1 millisecond'`,
      })
      .returningAll()
      .executeTakeFirstOrThrow()) as TaskRow;
  }

  /** The caller's own task of this agent, unexpired; anyone else's is unknown. */
  async get(id: string, agentId: string, principal: string): Promise<TaskRow | undefined> {
    return (await this.db
      .selectFrom('mcp_tasks')
      .selectAll()
      .where('id', '=', id)
      .where('agent_id', '=', agentId)
      .where('principal', '=', principal)
      .where('expires_at', '>', sql<Date>`now()`)
      .executeTakeFirst()) as TaskRow | undefined;
  }

  /** A task of the agent by id, whoever made it (for a stream already checked to be its caller's). */
  async byId(id: string, agentId: string): Promise<TaskRow | undefined> {
    return (await this.db
      .selectFrom('mcp_tasks')
      .selectAll()
      .where('id', '=', id)
      .where('agent_id', '=', agentId)
      .executeTakeFirst()) as TaskRow | undefined;
  }

  /** The caller's unexpired tasks of this agent, oldest first (2025-11-25 tasks/list). */
  async list(agentId: string, principal: string, limit: number, offset = 0): Promise<TaskRow[]> {
    return (await this.db
      .selectFrom('mcp_tasks')
      .selectAll()
      .where('agent_id', '=', agentId)
      .where('principal', '=', principal)
      .where('expires_at', '>', sql<Date>`now()`)
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute()) as TaskRow[];
  }

  /** The agent asked: the question joins the open ones (a live task only); the row as it is then. */
  async ask(
    executor: GatewayDb,
    id: string,
    key: string,
    question: Record<string, unknown>,
  ): Promise<TaskRow | undefined> {
    const { rows } = await sql<TaskRow>`
      UPDATE mcp_tasks
      SET input_requests = input_requests || jsonb_build_object(${key}::text, ${JSON.stringify(question)}::jsonb),
          status = 'input_required', updated_at = now()
      WHERE id = ${id} AND status IN ('working', 'input_required')
      RETURNING *`.execute(executor);
    return rows[0];
  }

  /** A push config was made for the task: from now on its changes are reported; the row as it is. */
  async pushOn(executor: GatewayDb, id: string): Promise<TaskRow | undefined> {
    return (await executor
      .updateTable('mcp_tasks')
      .set({ push: true })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()) as TaskRow | undefined;
  }

  /** The client answered `keys`: they are no longer open; none left, the task works again. The row then. */
  async answered(executor: GatewayDb, id: string, keys: string[]): Promise<TaskRow | undefined> {
    const { rows } = await sql<TaskRow>`
      UPDATE mcp_tasks
      SET input_requests = input_requests - ${keys}::text[],
          status = CASE WHEN (input_requests - ${keys}::text[]) = '{}'::jsonb THEN 'working' ELSE status END,
          updated_at = now()
      WHERE id = ${id} AND status IN ('working', 'input_required')
      RETURNING *`.execute(executor);
    return rows[0];
  }

  /**
   * End a live task, in `executor` (a transaction the caller reports it in).
   * Undefined when it had ended already: somebody else reported it.
   */
  async end(executor: GatewayDb, id: string, end: TaskEnd): Promise<TaskRow | undefined> {
    return (await executor
      .updateTable('mcp_tasks')
      .set({
        status: end.status,
        result: end.result ? JSON.stringify(end.result) : null,
        error: end.error ? JSON.stringify(end.error) : null,
        input_requests: '{}',
        updated_at: sql<Date>`now()`,
      })
      .where('id', '=', id)
      .where('status', 'in', ['working', 'input_required'])
      .returningAll()
      .executeTakeFirst()) as TaskRow | undefined;
  }

  /** Live tasks, for a follower that adopts them at start (a replica that died left them). */
  async live(limit: number): Promise<TaskRow[]> {
    return (await this.db
      .selectFrom('mcp_tasks')
      .selectAll()
      .where('status', 'in', ['working', 'input_required'])
      .orderBy('created_at')
      .limit(limit)
      .execute()) as TaskRow[];
  }

  /** Forget expired tasks. */
  async purge(): Promise<number> {
    const deleted = await this.db
      .deleteFrom('mcp_tasks')
      .where('expires_at', '<', sql<Date>`now()`)
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }

  transaction<T>(work: (tx: GatewayDb) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work);
  }
}
