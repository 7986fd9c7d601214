import { Inject, Injectable } from '@nestjs/common';
import type { CallEvent } from '@mcpgw/contracts';
import { CallCancelledError, ToolNotFoundError } from '../calls/call-errors';
import { CallRunner } from '../calls/call-runner.service';
import type { CallOutcome, CallRequest, ExecuteOptions } from '../calls/call-shapes';
import { ToolCatalogueService } from '../catalogue/tool-catalogue.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { QuotasService } from '../quotas/quotas.service';
import { CallTime, TIMEOUT_META_KEY } from '../timeouts/call-time';
import type { InvokeRequest } from './invoke-request';
import { toInvokeResult } from './invoke-result';
import type { RestFailure } from './problems';
import { callerLacks, callerMayUse, callerMeta, type Caller } from '../auth/caller';

export interface InvokeOptions {
  /** The HTTP request's id, for the call's log lines. */
  requestId: string;
  /** The timeout the client asked for (`Prefer: wait`), else CALL_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Aborted when the client leaves: the agent is told to stop. */
  signal?: AbortSignal;
  /** The agent's progress and log events (an event-stream answer). */
  onEvent?: (event: CallEvent) => void;
}

/** The 200 body (JSON text, as stored for retries), or the failure. */
export type InvokeAnswer = { ok: true; text: string; replayed: boolean } | { ok: false; failure: RestFailure };

/**
 * The REST dialect of a tool call: the caller's tool rights, then the one call
 * path (CallRunner: the pipeline, idempotency, metrics, traces, webhooks,
 * activity) on surface `rest`, the outcome rendered once as an invoke result.
 * Both routes (key and grant) come here.
 */
@Injectable()
export class RestInvoke {
  constructor(
    private readonly catalogue: ToolCatalogueService,
    private readonly calls: CallRunner,
    private readonly quotas: QuotasService,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  /** The call as the pipeline takes it, or why the caller may not make it. */
  async prepare(
    caller: Caller,
    request: InvokeRequest,
    options: Pick<InvokeOptions, 'requestId' | 'timeoutMs'>,
  ): Promise<{ ok: true; call: CallRequest } | { ok: false; failure: RestFailure }> {
    const tool = (await this.catalogue.forAgent(caller.agentId)).byName.get(request.tool);
    // A tool this caller may not use is, to it, a tool that does not exist.
    if (tool && !callerMayUse(caller, tool))
      return { ok: false, failure: { kind: 'call', error: new ToolNotFoundError(request.tool) } };
    const missing = tool ? callerLacks(caller, tool) : [];
    if (missing.length) return { ok: false, failure: { kind: 'credential_unavailable', tool: request.tool, missing } };
    return {
      ok: true,
      call: {
        agentId: caller.agentId,
        callerId: caller.callerId,
        tool: request.tool,
        arguments: request.arguments,
        callId: request.callId,
        time: CallTime.accept({ [TIMEOUT_META_KEY]: options.timeoutMs }, this.env),
        requestId: options.requestId,
        meta: tool && callerMeta(caller, tool),
      },
    };
  }

  /** One invoke, within the caller's call quotas, answered when the agent replies (or the call fails). */
  async invoke(caller: Caller, request: InvokeRequest, options: InvokeOptions): Promise<InvokeAnswer> {
    const prepared = await this.prepare(caller, request, options);
    if (!prepared.ok) return prepared;
    const admitted = this.quotas.admitCalls(caller.agentId, caller.callerId);
    if (!admitted.ok) return { ok: false, failure: { kind: 'quota', refusal: admitted.refusal } };
    try {
      const execute: ExecuteOptions = {
        ...(options.signal && { signal: options.signal }),
        ...(options.onEvent && { onEvent: options.onEvent }),
      };
      const render = (outcome: CallOutcome) => toInvokeResult(outcome, request.tool);
      const ran = await this.calls.run('rest', prepared.call, request.idempotencyKey, render, execute);
      if (ran.ok) return { ok: true, text: ran.resultText, replayed: ran.replayed };
      if (ran.error instanceof CallCancelledError) return { ok: false, failure: { kind: 'internal' } };
      return { ok: false, failure: { kind: 'call', error: ran.error } };
    } finally {
      admitted.release();
    }
  }
}
