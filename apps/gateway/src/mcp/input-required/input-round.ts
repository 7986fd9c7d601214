import type { CallEvent, ClientRequestMethod, InputResponse } from '@mcpgw/contracts';
import type { OpenQuestion } from './request-state';

/**
 * How long the round waits after the agent's last new question before it
 * answers the client: questions a skill asks together (Promise.all) go out in
 * one InputRequiredResult.
 */
export const SETTLE_MS = 150;

/** The code an agent's question gets when the client cannot answer it (2026-07-28 MissingRequiredClientCapability). */
export const MISSING_CAPABILITY = -32021;

/** The capability a client must have declared for the agent to ask it `method`. */
export function capabilityFor(method: ClientRequestMethod, params: Record<string, unknown>): string {
  if (method === 'sampling/createMessage') return 'sampling';
  if (method === 'roots/list') return 'roots';
  return params.mode === 'url' ? 'elicitation.url' : 'elicitation.form';
}

/** Whether the client declared `capability` in its `io.modelcontextprotocol/clientCapabilities`. */
export function declares(capabilities: Record<string, unknown>, capability: string): boolean {
  const [name, mode] = capability.split('.');
  const declared = capabilities[name];
  if (typeof declared !== 'object' || declared === null) return false;
  if (!mode) return true;
  // `elicitation: {}` is form mode only (the 2025-11-25 rule, kept in 2026-07-28).
  const modes = Object.keys(declared);
  return mode === 'form' ? modes.length === 0 || modes.includes('form') : modes.includes(mode);
}

export interface RoundOptions {
  agentId: string;
  capabilities: Record<string, unknown>;
  /** The client's `inputResponses` (checked: objects by key). */
  supplied: Record<string, Record<string, unknown>>;
  /** Publishes an answer to the agent (CallPipeline.answerInput). */
  answer: (messageId: string, response: InputResponse) => void;
  /** Why the agent may not ask at all in this request (e.g. a keyed call), if so. */
  refuseAll?: string;
  /** A retry: the call in flight and the questions of the last round. */
  resumed?: { messageId: string; channelId: string; open: Record<string, OpenQuestion> };
}

/**
 * The agent's questions during one request of a 2026-07-28 client (MRTR).
 * Each `input_request` event of the call is answered at once when it can be
 * (from the client's `inputResponses`; with an error when the client did not
 * declare the capability), else kept open; once the agent has asked all it
 * asks together, `settled` resolves and the request answers with the open
 * questions. The call stays in flight on the bus meanwhile (README.md).
 */
export class InputRound {
  readonly open = new Map<string, OpenQuestion>();
  messageId?: string;
  channelId?: string;
  readonly settled: Promise<void>;
  private settle!: () => void;
  private timer?: NodeJS.Timeout;
  private readonly used = new Set<string>();

  constructor(private readonly options: RoundOptions) {
    this.settled = new Promise((resolve) => (this.settle = resolve));
    if (options.resumed) {
      this.messageId = options.resumed.messageId;
      this.channelId = options.resumed.channelId;
    }
  }

  /**
   * A retry: answer the last round's questions the client answered (its other
   * `inputResponses` are ignored); those it did not answer are asked again.
   * Call once the call's events are watched, so no new question is missed.
   */
  answerLastRound(): void {
    const resumed = this.options.resumed;
    if (!resumed) return;
    for (const [key, question] of Object.entries(resumed.open)) {
      if (!this.answerFromSupplied(resumed.messageId, key)) this.keep(key, question);
    }
  }

  /** The call's events: questions are handled here; progress and logs are someone else's. */
  readonly onEvent = (event: CallEvent): void => {
    if (event.type !== 'input_request') return;
    const messageId = event.in_reply_to;
    this.messageId ??= messageId;
    if (event.channel_id) this.channelId ??= event.channel_id;
    if (this.open.has(event.key)) return;
    const refusal = this.refusal(event.method, event.params);
    if (refusal) {
      this.options.answer(messageId, { key: event.key, error: { code: MISSING_CAPABILITY, message: refusal } });
      return;
    }
    if (this.answerFromSupplied(messageId, event.key)) return;
    this.keep(event.key, { method: event.method, params: event.params });
  };

  /** The open questions, as an InputRequiredResult's `inputRequests`. */
  inputRequests(): Record<string, OpenQuestion> {
    return Object.fromEntries(this.open);
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private refusal(method: ClientRequestMethod, params: Record<string, unknown>): string | undefined {
    if (this.options.refuseAll) return this.options.refuseAll;
    if (!this.channelId) return 'this gateway cannot continue the call (the agent gave no channel)';
    const capability = capabilityFor(method, params);
    return declares(this.options.capabilities, capability)
      ? undefined
      : `the client did not declare the ${capability} capability`;
  }

  private answerFromSupplied(messageId: string, key: string): boolean {
    const result = this.options.supplied[key];
    if (!result || this.used.has(key)) return false;
    this.used.add(key);
    this.options.answer(messageId, { key, result });
    return true;
  }

  private keep(key: string, question: OpenQuestion): void {
    this.open.set(key, question);
    clearTimeout(this.timer);
    this.timer = setTimeout(this.settle, SETTLE_MS);
  }
}
