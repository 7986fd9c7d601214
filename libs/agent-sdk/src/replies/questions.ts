import { CallInput, type ClientRequestMethod, type Deadline, type InputResponse } from '@mcpgw/contracts';
import type { BusClient, BusSubscription } from '@mcpgw/bus/core';
import { randomUUID } from 'node:crypto';
import type { CallEventsPublisher } from './call-events';

/** A key a skill may give its question: it travels in JSON-RPC ids (`mcpgw-input:<message>:<key>:<tag>`). */
export const QUESTION_KEY = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * How long a question to the client may wait for its answer when the message
 * carries no deadline (an older gateway): with one, the call's deadline bounds
 * the question and this is not used.
 */
export const INPUT_REQUEST_FALLBACK_MS = 60_000;

/** Where the question belongs, and the name a skill gave it (else a random one). */
export interface QuestionOptions {
  key?: string;
  channelId?: string;
}

/** The client did not answer a question, or answered with an error (`code`: its JSON-RPC error code). */
export class ClientRequestError extends Error {
  constructor(
    message: string,
    readonly code?: number,
  ) {
    super(message);
    this.name = 'ClientRequestError';
  }
}

/**
 * Requests from the agent to the MCP client in the middle of a call
 * (sampling, elicitation, roots): published as an `input_request` event of the
 * message; the gateway streaming the call relays it and publishes the
 * client's answer on the message's input subject. A question ends with its
 * call: `signal` aborts when the caller cancels or the call's deadline passes,
 * so it needs no timer of its own unless the message carried no deadline.
 */
export class Questions {
  constructor(
    private readonly bus: BusClient,
    private readonly events: CallEventsPublisher,
    private readonly agentId: string,
  ) {}

  async ask(
    messageId: string,
    method: ClientRequestMethod,
    params: Record<string, unknown>,
    signal: AbortSignal,
    deadline?: Deadline,
    options: QuestionOptions = {},
  ): Promise<Record<string, unknown>> {
    if (signal.aborted) throw signal.reason;
    if (options.key !== undefined && !QUESTION_KEY.test(options.key)) {
      throw new ClientRequestError(`a question key must match ${QUESTION_KEY.source}`);
    }
    const key = options.key ?? randomUUID();
    const publishQuestion = () =>
      this.events.publish({
        type: 'input_request',
        in_reply_to: messageId,
        key,
        method,
        params,
        ...(options.channelId ? { channel_id: options.channelId } : {}),
      });
    let subscription: BusSubscription | undefined;
    const answer = new Promise<InputResponse>((resolve, reject) => {
      const timer = deadline
        ? undefined
        : setTimeout(
            () => reject(new ClientRequestError(`the client did not answer ${method} in time`)),
            INPUT_REQUEST_FALLBACK_MS,
          );
      signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
      subscription = this.bus.subscribe(CallInput.at(this.agentId, messageId), ({ payload }) => {
        // A gateway replica that took the call over may have missed the question: ask it again.
        if (payload.resend) return publishQuestion();
        if (payload.key !== key) return;
        clearTimeout(timer);
        resolve(payload);
      });
    });
    try {
      publishQuestion();
      const response = await answer;
      if (response.error) throw new ClientRequestError(response.error.message, response.error.code);
      return response.result ?? {};
    } finally {
      subscription?.unsubscribe();
    }
  }
}
