import { Injectable } from '@nestjs/common';
import { CALL_ID_META_KEY, callIdOf, messageIdOfCall, type ContentItem } from '@mcpgw/contracts';
import { CallError } from '../calls/call-errors';
import { QuotasService } from '../quotas/quotas.service';
import { TaskService } from '../tasks/tasks.service';
import type { TaskRow } from '../tasks/tasks.store';
import type { InvokeRequest } from './invoke-request';
import { outputOf } from './invoke-result';
import type { RestFailure } from './problems';
import type { Caller } from '../auth/caller';
import { RestInvoke, type InvokeOptions } from './rest-invoke.service';

export type CallState = ReturnType<typeof callState>;
export type CallAnswer = { ok: true; state: CallState } | { ok: false; failure: RestFailure };

/**
 * `Prefer: respond-async`: the call runs as a task (the MCP tasks' store and
 * follower, ../tasks/README.md), named by its call id, which is the task's id
 * too (the chat_message's id, `call_<hex>`): `GET /api/v1/calls/{call_id}` reads
 * it, `DELETE` cancels it on the bus. Only its caller finds it.
 */
@Injectable()
export class RestCalls {
  constructor(
    private readonly invoker: RestInvoke,
    private readonly tasks: TaskService,
    private readonly quotas: QuotasService,
  ) {}

  /** Post the call without waiting, make its task, and answer its state (`working`). */
  async start(caller: Caller, request: InvokeRequest, options: InvokeOptions): Promise<CallAnswer> {
    if (request.callId !== undefined)
      return invalid('call_id cannot be named on an async call: its call id is the one in Location');
    const prepared = await this.invoker.prepare(caller, request, options);
    if (!prepared.ok) return prepared;
    const admitted = this.quotas.admitCalls(caller.agentId, caller.callerId);
    if (!admitted.ok) return { ok: false, failure: { kind: 'quota', refusal: admitted.refusal } };
    try {
      const { call } = prepared;
      // A REST client cannot be asked anything: the agent's questions are refused at once.
      const { ref } = await this.tasks.postAsTask(call, {}, true);
      return this.state(caller, callIdOf(ref.messageId));
    } catch (error) {
      if (!(error instanceof CallError)) throw error;
      return { ok: false, failure: { kind: 'call', error } };
    } finally {
      admitted.release();
    }
  }

  async state(caller: Caller, callId: string): Promise<CallAnswer> {
    const row = await this.tasks.current(messageIdOfCall(callId), caller.agentId, caller.callerId);
    return row ? { ok: true, state: callState(row) } : notFound(callId);
  }

  /** Tell the agent to stop (a call that ended is left as it is), and answer its state. */
  async cancel(caller: Caller, callId: string): Promise<CallAnswer> {
    const cancelled = await this.tasks.cancel(messageIdOfCall(callId), caller.agentId, caller.callerId);
    return cancelled.ok ? this.state(caller, callId) : notFound(callId);
  }
}

/** A call run as a task, as REST shows it: its status, and the invoke result or the error once it ended. */
function callState(row: TaskRow) {
  const result = row.status === 'completed' ? row.result : null;
  const content = (result?.content ?? []) as ContentItem[];
  return {
    call_id: (result?._meta as Record<string, string> | undefined)?.[CALL_ID_META_KEY] ?? callIdOf(row.message_id),
    tool: row.tool,
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...(result && {
      result: {
        output: outputOf(result.structuredContent as Record<string, unknown> | undefined, content),
        content,
        is_error: result.isError === true,
      },
    }),
    ...(row.status === 'failed' && row.error && { error: row.error }),
  };
}

function notFound(callId: string): CallAnswer {
  return { ok: false, failure: { kind: 'not_found', detail: `no call ${callId} of this caller runs as a task` } };
}

function invalid(detail: string): CallAnswer {
  return { ok: false, failure: { kind: 'invalid_request', detail } };
}
