import { Injectable } from '@nestjs/common';
import { AgentCancel, CallCancelled, type CancelRequest, type ChatMessage } from '@mcpgw/contracts';
import { BusClient } from '@mcpgw/bus';
import { CallCancelledError } from '../calls/call-errors';
import { InFlightCalls } from './in-flight-calls.service';

/** One running request, as the surface holds it: its signal, and `end` when it is answered. */
export interface RunningRequest {
  signal: AbortSignal;
  end(): void;
}

/** One call's cancellation, as the pipeline holds it while the call runs. */
export interface CancellableCall {
  /** The step's result, unless the client cancels first: then CallCancelledError at once. */
  unlessCancelled<T>(step: Promise<T>): Promise<T>;
  /** The call is over: stop listening (a later abort tells nobody). */
  end(): void;
}

/**
 * Every rule about cancelling a call on the gateway, in one place (the story
 * across the three apps is README.md beside this file): which request a client
 * cancels, how the cancel reaches the replica running it, and how the agent
 * hears of it.
 */
@Injectable()
export class CallCancellation {
  constructor(
    private readonly inFlight: InFlightCalls,
    private readonly bus: BusClient,
  ) {}

  /**
   * A request begins on this replica. Its signal aborts on `notifications/cancelled`
   * (heard here or on any replica) and, when given, when the client leaves.
   */
  begin(
    callerId: string,
    sessionId: string | undefined,
    requestId: string | number,
    disconnected?: AbortSignal,
  ): RunningRequest {
    const running = this.inFlight.begin(InFlightCalls.key(callerId, sessionId, requestId));
    return {
      signal: disconnected ? AbortSignal.any([running.signal, disconnected]) : running.signal,
      end: running.end,
    };
  }

  /**
   * `notifications/cancelled`: stop the request here, or, when another replica
   * runs it, on that one (a fan-out event; the replica holding it aborts it).
   * Request ids name nothing outside a session.
   */
  cancelRequest(callerId: string, sessionId: string | undefined, requestId: string | number): void {
    if (!sessionId) return;
    const key = InFlightCalls.key(callerId, sessionId, requestId);
    if (!this.inFlight.cancel(key)) this.bus.publish(CallCancelled, { key });
  }

  /**
   * Watch a call's signal while the pipeline runs it. On abort, the agent is
   * told to stop (`AgentCancel`, every pod of the agent hears it), but only by
   * the request that owns the message: a request that merely joined another's
   * message (an idempotent retry) stops its own wait and nothing else.
   */
  watch(message: ChatMessage, signal: AbortSignal | undefined, ownsMessage: boolean): CancellableCall {
    if (signal?.aborted) throw new CallCancelledError();
    const tellAgent = () => {
      if (ownsMessage) this.tellAgent(message, 'cancelled by the client');
    };
    signal?.addEventListener('abort', tellAgent, { once: true });
    return {
      unlessCancelled: (step) => unlessCancelled(signal, step),
      end: () => signal?.removeEventListener('abort', tellAgent),
    };
  }

  /** A task was cancelled (tasks/cancel, on any replica): the pod running its message stops the skill. */
  stopMessage(agentId: string, messageId: string, reason: string): void {
    this.tellAgent({ id: messageId, agent_id: agentId } as ChatMessage, reason);
  }

  /** Tell every pod of the agent to stop working on the message (the one running it will). */
  private tellAgent(message: ChatMessage, reason: string): void {
    const cancel: CancelRequest = { type: 'cancel', message_id: message.id, reason };
    this.bus.publish(AgentCancel.at(message.agent_id), cancel);
  }
}

/** The step's result, unless `signal` aborts first (then CallCancelledError at once; the step is left to end alone). */
function unlessCancelled<T>(signal: AbortSignal | undefined, step: Promise<T>): Promise<T> {
  if (!signal) return step;
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(new CallCancelledError());
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    step.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
