import { Injectable } from '@nestjs/common';
import { NotFoundError, type ChatMessage } from '@mcpgw/contracts';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import type { GatewayDb, TaskStatus } from '../database/schema';

/**
 * What the gateway keeps of an agent's traffic, read for the operator (the admin
 * CLI's `session list`, `idempotency list|show`, `task list|show`, and the
 * management API): MCP sessions, idempotency records, tasks. Read only; the
 * newest first (operations/records.ts checks the filters and the limit).
 */

export interface McpSessionView {
  id: string;
  agent_id: string;
  /** Who opened it: an API key's id, an OAuth subject… (never a secret). */
  principal: string;
  channel_id: string;
  protocol_version: string;
  client_info: unknown;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  ended_at: string | null;
}

export interface IdempotencyRecordView {
  agent_id: string;
  caller: string;
  key: string;
  tool_id: string;
  created_at: string;
  completed_at: string | null;
  expires_at: string;
  /** A retry with the key gets the stored result. */
  replayable: boolean;
  /** The surface that claimed the key; an A2A record (only when a webhook hears the call) renders the reply again until it completes. */
  surface: string | null;
}

export interface IdempotencyRecordDetail extends IdempotencyRecordView {
  /** The call as the agent got it; an A2A record's is `{id, created_at}` alone (`call show` has the rest: idempotency/recorded-message.ts). */
  message: ChatMessage | Pick<ChatMessage, 'id' | 'created_at'>;
  /** The exact result text retries get; null until the call completed. */
  result: string | null;
}

export interface TaskView {
  id: string;
  agent_id: string;
  principal: string;
  tool: string;
  channel_id: string;
  message_id: string;
  status: TaskStatus;
  created_at: string;
  updated_at: string;
  ends_at: string;
  expires_at: string;
}

export interface TaskDetail extends TaskView {
  input_requests: Record<string, unknown>;
  result: Record<string, unknown> | null;
  error: Record<string, unknown> | null;
}

const iso = (value: Date | null): string | null => (value ? value.toISOString() : null);
const now = sql<Date>`now()`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Reads of the gateway's records for the operator (both faces build it over their database handle). */
@Injectable()
export class OperatorRecordsStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  async sessions(agentId: string, limit: number, open: boolean): Promise<McpSessionView[]> {
    let query = this.db
      .selectFrom('mcp_sessions')
      .select([
        'id',
        'agent_id',
        'principal',
        'channel_id',
        'protocol_version',
        'client_info',
        'created_at',
        'last_seen_at',
        'expires_at',
        'ended_at',
      ])
      .where('agent_id', '=', agentId);
    if (open) query = query.where('ended_at', 'is', null).where('expires_at', '>', now);
    const rows = await query.orderBy('created_at', 'desc').limit(limit).execute();
    return rows.map((row) => ({
      ...row,
      client_info: row.client_info ?? null,
      created_at: row.created_at.toISOString(),
      last_seen_at: row.last_seen_at.toISOString(),
      expires_at: row.expires_at.toISOString(),
      ended_at: iso(row.ended_at),
    }));
  }

  async idempotencyRecords(agentId: string, limit: number, caller?: string): Promise<IdempotencyRecordView[]> {
    let query = this.db
      .selectFrom('idempotency_records')
      .select(['agent_id', 'caller', 'key', 'tool_id', 'created_at', 'completed_at', 'expires_at', 'result', 'surface'])
      .where('agent_id', '=', agentId)
      .where('expires_at', '>', now);
    if (caller !== undefined) query = query.where('caller', '=', caller);
    const rows = await query.orderBy('created_at', 'desc').limit(limit).execute();
    return rows.map(({ result, ...row }) => recordView(row, result !== null));
  }

  async idempotencyRecord(agentId: string, caller: string, key: string): Promise<IdempotencyRecordDetail> {
    const row = await this.db
      .selectFrom('idempotency_records')
      .selectAll()
      .where('agent_id', '=', agentId)
      .where('caller', '=', caller)
      .where('key', '=', key)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (!row) throw new NotFoundError(`no idempotency record ${key} of caller ${caller} at agent ${agentId}`);
    return { ...recordView(row, row.result !== null), message: row.message, result: row.result };
  }

  async tasks(agentId: string, limit: number, status?: TaskStatus): Promise<TaskView[]> {
    let query = this.db.selectFrom('mcp_tasks').selectAll().where('agent_id', '=', agentId);
    if (status !== undefined) query = query.where('status', '=', status);
    const rows = await query.orderBy('created_at', 'desc').limit(limit).execute();
    return rows.map((row) => taskView(row));
  }

  async task(taskId: string): Promise<TaskDetail> {
    // Task ids are UUIDs (a uuid column): anything else names no task, rather than a query PostgreSQL refuses.
    if (!UUID.test(taskId)) throw new NotFoundError(`no task ${taskId}`);
    const row = await this.db.selectFrom('mcp_tasks').selectAll().where('id', '=', taskId).executeTakeFirst();
    if (!row) throw new NotFoundError(`no task ${taskId}`);
    return { ...taskView(row), input_requests: row.input_requests, result: row.result, error: row.error };
  }
}

function recordView(
  row: {
    agent_id: string;
    caller: string;
    key: string;
    tool_id: string;
    created_at: Date;
    completed_at: Date | null;
    expires_at: Date;
    surface: string | null;
  },
  replayable: boolean,
): IdempotencyRecordView {
  return {
    agent_id: row.agent_id,
    caller: row.caller,
    key: row.key,
    tool_id: row.tool_id,
    created_at: row.created_at.toISOString(),
    completed_at: iso(row.completed_at),
    expires_at: row.expires_at.toISOString(),
    replayable,
    surface: row.surface,
  };
}

function taskView(row: {
  id: string;
  agent_id: string;
  principal: string;
  tool: string;
  channel_id: string;
  message_id: string;
  status: TaskStatus;
  created_at: Date;
  updated_at: Date;
  ends_at: Date;
  expires_at: Date;
}): TaskView {
  return {
    id: row.id,
    agent_id: row.agent_id,
    principal: row.principal,
    tool: row.tool,
    channel_id: row.channel_id,
    message_id: row.message_id,
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ends_at: row.ends_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
  };
}
