import { Injectable } from '@nestjs/common';
import type { CallEvent } from '@mcpgw/contracts';
import { CallDetachedError } from '../../calls/call-errors';
import { CallPipeline } from '../../calls/call-pipeline.service';
import type { CallOutcome, ExecuteOptions } from '../../calls/call-shapes';
import type { CallTime } from '../../timeouts/call-time';
import type { JsonRpcRequest } from '../protocol/json-rpc';
import { InputRound } from './input-round';
import { REQUEST_STATE_TTL_MS, RequestStates, requestDigest, type RequestState } from './request-state';

/** Who asks, as the requestState binds it. */
export interface Asker {
  agentId: string;
  /** `apikey:<key id>`. */
  callerId: string;
  /** The request's `_meta["io.modelcontextprotocol/clientCapabilities"]`. */
  capabilities: Record<string, unknown>;
}

/** The MRTR params of a request, checked: a new round, or why the request is invalid (-32602). */
export type Begun = { ok: true; round: InputRound; state?: RequestState } | { ok: false; message: string };

/** How one request of a call ended: its value, or the questions the client must answer first. */
export type Served<T> = { done: true; value: T } | { done: false; result: Record<string, unknown> };

/** A call that becomes a task when the agent neither answers nor asks in its first moments (../../tasks/). */
export interface Escalation {
  afterMs: number;
  /** The call's channel, known before it is posted. */
  channelId: string;
  toTask: (call: { messageId: string; channelId: string }, callEndsAt: number) => Promise<Record<string, unknown>>;
}

export interface Serving {
  time: CallTime;
  escalate?: Escalation;
  signal?: AbortSignal;
  /** The surface's relay of progress and logs, if it streams them. */
  onEvent?: (event: CallEvent) => void;
}

/**
 * Input-required results (MRTR, SEP-2322) for tools/call, prompts/get and
 * resources/read of 2026-07-28 clients: the agent asks as it always does (an
 * `input_request` event on the bus) and its call stays in flight; the request
 * answers `{resultType: "input_required", inputRequests, requestState}`; the
 * retry, on any replica, opens the state, answers the agent and waits for
 * what comes next. README.md beside this file has the design.
 */
@Injectable()
export class InputRequired {
  constructor(
    private readonly states: RequestStates,
    private readonly pipeline: CallPipeline,
  ) {}

  /** Check `inputResponses` and `requestState`, and open the round. `refuseAll`: the agent may not ask here. */
  begin(request: JsonRpcRequest, asker: Asker, refuseAll?: string): Begun {
    const params = request.params ?? {};
    const supplied = params.inputResponses;
    if (supplied !== undefined && !isResultMap(supplied))
      return { ok: false, message: 'params.inputResponses must map each input request key to its result (an object)' };
    let state: RequestState | undefined;
    if (params.requestState !== undefined) {
      const opened = this.states.open(params.requestState, this.binding(request, asker));
      if (!opened.ok) return { ok: false, message: `Invalid requestState: ${opened.reason}` };
      state = opened.state;
    }
    const round = new InputRound({
      agentId: asker.agentId,
      capabilities: asker.capabilities,
      supplied: (supplied ?? {}) as Record<string, Record<string, unknown>>,
      answer: (messageId, response) => this.pipeline.answerInput(asker.agentId, messageId, response),
      refuseAll,
      resumed: state && { messageId: state.messageId, channelId: state.channelId, open: state.open },
    });
    return { ok: true, round, ...(state ? { state } : {}) };
  }

  /**
   * Run the request: a new call (`fresh`), or the call the state names,
   * continued. Either way it ends with the call's value, or, when the agent
   * asked the client something, with an InputRequiredResult.
   */
  async serve<T>(
    request: JsonRpcRequest,
    asker: Asker,
    begun: Extract<Begun, { ok: true }>,
    serving: Serving,
    fresh: (options: ExecuteOptions) => Promise<T>,
    resumed: (outcome: CallOutcome) => T,
  ): Promise<Served<T>> {
    const { round, state } = begun;
    const relay = serving.onEvent;
    const onEvent = (event: CallEvent) => {
      round.onEvent(event);
      relay?.(event);
    };
    const escalate = serving.escalate;
    let escalation: NodeJS.Timeout | undefined;
    const detach = escalate
      ? Promise.race([
          round.settled,
          new Promise<void>((resolve) => {
            escalation = setTimeout(() => round.open.size === 0 && resolve(), escalate.afterMs);
          }),
        ])
      : round.settled;
    if (escalate) round.channelId ??= escalate.channelId;
    try {
      if (!state)
        return {
          done: true,
          value: await fresh({
            signal: serving.signal,
            onEvent,
            detach,
            onMessage: ({ messageId }) => (round.messageId ??= messageId),
          }),
        };
      const ref = { agentId: asker.agentId, channelId: state.channelId, messageId: state.messageId };
      const outcome = await this.pipeline.resume(ref, serving.time, {
        signal: serving.signal,
        onEvent,
        detach,
        started: () => round.answerLastRound(),
      });
      return { done: true, value: resumed(outcome) };
    } catch (error) {
      if (!(error instanceof CallDetachedError)) throw error;
      // The agent waits until the call's limit, fixed when it was first posted (timeouts/README.md).
      const callEndsAt = state?.callEndsAt ?? Date.now() + serving.time.limit.remainingMs();
      if (escalate && round.open.size === 0 && round.messageId && round.channelId)
        return {
          done: false,
          result: await escalate.toTask({ messageId: round.messageId, channelId: round.channelId }, callEndsAt),
        };
      return { done: false, result: this.inputRequired(request, asker, round, callEndsAt) };
    } finally {
      clearTimeout(escalation);
      round.stop();
    }
  }

  private inputRequired(
    request: JsonRpcRequest,
    asker: Asker,
    round: InputRound,
    callEndsAt: number,
  ): Record<string, unknown> {
    const requestState = this.states.seal({
      ...this.binding(request, asker),
      messageId: round.messageId!,
      channelId: round.channelId!,
      open: round.inputRequests(),
      callEndsAt,
      expiresAt: Math.min(Date.now() + REQUEST_STATE_TTL_MS, callEndsAt),
    });
    return { resultType: 'input_required', inputRequests: round.inputRequests(), requestState };
  }

  private binding(request: JsonRpcRequest, asker: Asker) {
    return {
      principal: asker.callerId,
      agentId: asker.agentId,
      method: request.method,
      digest: requestDigest(request.method, request.params ?? {}),
    };
  }
}

function isResultMap(value: unknown): boolean {
  const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
  return isObject(value) && Object.values(value as object).every(isObject);
}
