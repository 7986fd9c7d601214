import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { BusClient } from '@mcpgw/bus';
import { BusPattern, isAttemptsExhausted } from '@mcpgw/contracts';
import { METRICS_REGISTRY } from '@mcpgw/observability';
import { Gauge, type Registry } from 'prom-client';
import { CallCancelledError, IdempotencyKeyReusedError, InternalCallError } from '../calls/call-errors';
import { CallPipeline } from '../calls/call-pipeline.service';
import type { CallOutcome, CallRequest, CallSurface, ExecuteOptions, PreparedCall } from '../calls/call-shapes';
import { settleCancelledClaim } from '../cancellation/cancelled-keyed-call';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { CallTime } from '../timeouts/call-time';
import { callFingerprint } from './fingerprint';
import { IdempotencyStore, type AlsoInTransaction, type RecordKey } from './idempotency.store';
import { keyRefOf } from './key-ref';
import { messageToJoin, namesItsPosting, recordedOf } from './recorded-message';
import { rendersAgain } from './rendered-again';

/**
 * What else to write when a keyed call's outcome is settled, in the same
 * transaction (the webhook outbox); undefined when nothing.
 */
export type OnSettled = (outcome: CallOutcome) => AlsoInTransaction | undefined;

export interface IdempotentResult {
  /** The result as it was first sent, byte for byte. */
  resultText: string;
  /** True when this request did not run the call itself. */
  replayed: boolean;
}

/**
 * tools/call with an idempotency key. See README.md beside this file: the first
 * request claims the key and runs the call; any other request with the key
 * gets the stored result or joins the first one's message, never a second run.
 */
@Injectable()
export class IdempotentCalls implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(IdempotentCalls.name);
  private purgeTimer?: NodeJS.Timeout;
  /** Retries waiting on a call another request runs: how many piled up on slow calls (and a state tests wait on). */
  private readonly joinsWaiting: Gauge;

  constructor(
    private readonly pipeline: CallPipeline,
    private readonly store: IdempotencyStore,
    private readonly bus: BusClient,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.joinsWaiting = new Gauge({
      name: 'mcpgw_idempotent_joins_waiting',
      help: 'keyed tools/call requests that joined the message of a call another request runs, waiting for its result',
      registers: [registry],
    });
  }

  onApplicationBootstrap(): void {
    this.purgeTimer = setInterval(() => void this.purgeExpired(), this.env.IDEMPOTENCY_PURGE_INTERVAL_MS).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.purgeTimer);
  }

  /**
   * `render` turns an outcome into the surface's result JSON; that text is what
   * is stored and replayed. `reported`: the call's outcome goes to a webhook
   * (`onSettled` will write it), which needs the record (README.md, "Webhooks").
   */
  async run(
    surface: CallSurface,
    request: CallRequest,
    key: string,
    render: (outcome: CallOutcome) => string,
    options: ExecuteOptions = {},
    onSettled: OnSettled = () => undefined,
    reported = false,
  ): Promise<IdempotentResult> {
    const id: RecordKey = { agentId: request.agentId, caller: request.callerId, key };
    const fingerprint = callFingerprint(request.tool, request.arguments);
    const idempotency = { key, fingerprint, ref: keyRefOf(request.agentId, request.callerId, key) };
    const prepared = { ...(await this.pipeline.prepare(request)), idempotency };
    if (namesItsPosting(surface) && !reported) return this.runUnrecorded(prepared, request, render, options);

    for (let attempt = 0; attempt < 3; attempt++) {
      const claimed = await this.store.claim(
        id,
        { fingerprint, toolId: prepared.toolId, message: recordedOf(surface, prepared.message), surface },
        this.env.IDEMPOTENCY_TTL_SECONDS,
        request.time.deadline,
      );
      if (claimed) {
        // A record taken over from an expired one: whatever posting still holds the key lets go.
        const mine =
          claimed === 'taken_over' ? { ...prepared, idempotency: { ...idempotency, renews: true } } : prepared;
        try {
          const outcome = await this.pipeline.execute(mine, request.time, { ...options, keepsResult: true });
          // Joined by its key, the posting was another request's (its record lost, or another surface's).
          const replayed = outcome.joined === true;
          return { resultText: await this.settle(surface, request, id, outcome, render, onSettled), replayed };
        } catch (error) {
          if (error instanceof CallCancelledError) await this.releaseCancelled(surface, request, id, mine, render);
          // The message service holds this message with other content: the record was claimed
          // after the first one's was gone (README.md, "The message service checks too").
          if (error instanceof IdempotencyKeyReusedError) await this.forgetRefused(id, request);
          throw error;
        }
      }
      const record = await this.store.find(id, request.time.deadline);
      if (!record) continue; // expired and purged between the two statements: claim again
      if (!record.fingerprint.equals(fingerprint)) throw new IdempotencyKeyReusedError(key);
      const ownShape = rendersAlike(record.surface, surface);
      if (record.result !== null && ownShape) return { resultText: record.result, replayed: true };
      // Still in flight, here or on another replica, or left by a gateway that died, or
      // answered in another surface's shape: post the same message (or this request's own
      // under its id) again. The message service knows it, so this joins the first posting
      // and returns its reply; it never runs the tool a second time.
      const joined = { toolId: record.toolId, message: messageToJoin(record.message, prepared.message), idempotency };
      this.joinsWaiting.inc();
      try {
        const outcome = await this.pipeline.execute(joined, request.time, {
          ...options,
          ownsMessage: false,
          keepsResult: true,
        });
        // The record keeps the shape of the surface that claimed it; another surface renders its own.
        const resultText = ownShape
          ? await this.settle(surface, request, id, outcome, render, onSettled)
          : render(outcome);
        return { resultText, replayed: true };
      } finally {
        this.joinsWaiting.dec();
      }
    }
    throw new InternalCallError(`idempotency record ${key} kept changing`);
  }

  /**
   * A key that names its posting (A2A's messageId), when nothing reports the call's outcome: no
   * record. The posting is the claim: it carries the key and its fingerprint, so the message
   * service runs it once, joins any repeat (or another surface's posting of the key) and refuses
   * the key with other arguments (README.md, "A2A's messages claim nothing"). A repeat renders
   * the stored reply again; `replayed` is the message service's word that the posting was there.
   */
  private async runUnrecorded(
    prepared: PreparedCall,
    request: CallRequest,
    render: (outcome: CallOutcome) => string,
    options: ExecuteOptions,
  ): Promise<IdempotentResult> {
    const outcome = await this.pipeline.execute(prepared, request.time, { ...options, keepsResult: true });
    // Given up: another surface's next request with the key runs the call (this messageId's posting is fixed).
    if (isAttemptsExhausted(outcome.reply)) await this.forgetKey(outcome.messageId);
    return { resultText: render(outcome), replayed: outcome.joined === true };
  }

  /**
   * Store the outcome as the key's result, which retries replay. Not when the
   * agent gave up delivering the call (its pods kept dying in the skill): that
   * error is answered, and the record released, so a retry runs the call again.
   * Whatever `onSettled` adds is written in the transaction that stores the
   * result (only by the request that stores it), or releases the record.
   *
   * A surface that renders a reply the same way every time stores nothing
   * when nothing goes with it: its retries join the posting and render the
   * stored reply again (`rendersAgain`).
   */
  private async settle(
    surface: CallSurface,
    { time }: CallRequest,
    id: RecordKey,
    outcome: CallOutcome,
    render: (outcome: CallOutcome) => string,
    onSettled: OnSettled,
  ): Promise<string> {
    const also = onSettled(outcome);
    if (isAttemptsExhausted(outcome.reply)) {
      // Given up: the next request with the key runs the call again, here and at the message service.
      await this.forgetKey(outcome.messageId);
      await this.store.release(id, { also, deadline: time.deadline });
      return render(outcome);
    }
    if (!also && rendersAgain(surface)) return render(outcome);
    return this.store.complete(id, render(outcome), { also, deadline: time.deadline });
  }

  /**
   * Drop a claim the message service refused, so that the key's first arguments find no record in
   * the way. Failing, it is only logged: the refusal is the answer either way, and the claim
   * expires with its TTL.
   */
  private async forgetRefused(id: RecordKey, { time }: CallRequest): Promise<void> {
    try {
      await this.store.release(id, { deadline: time.deadline });
    } catch (error) {
      this.logger.warn({ msg: 'a refused idempotency claim was not released', error: (error as Error).message });
    }
  }

  /**
   * The posting lets go of its key (its call was cancelled, or the agent gave up on it), so that
   * the next posting with the key runs (README.md, "One key, one posting, at the message service
   * too"). Failing, it is logged: the key is then held until its time to live, and a retry
   * meanwhile joins the posting that will not be answered.
   */
  private async forgetKey(messageId: string): Promise<void> {
    try {
      await this.bus.request(BusPattern.ForgetKey, { message_id: messageId });
    } catch (error) {
      this.logger.warn({
        msg: 'a posting did not let go of its idempotency key',
        message_id: messageId,
        error: (error as Error).message,
      });
    }
  }

  /** The client that claimed the key cancelled: the rule is the cancellation module's (cancelled-keyed-call.ts). */
  private releaseCancelled(
    surface: CallSurface,
    { time }: CallRequest,
    id: RecordKey,
    prepared: PreparedCall,
    render: (outcome: CallOutcome) => string,
  ) {
    return settleCancelledClaim({
      lookOnce: async () => render(await this.pipeline.execute(prepared, CallTime.none(), { ownsMessage: false })),
      complete: async (resultText) =>
        rendersAgain(surface) ? resultText : this.store.complete(id, resultText, { deadline: time.deadline }),
      release: async () => {
        await this.forgetKey(prepared.message.id);
        await this.store.release(id, { deadline: time.deadline });
      },
    });
  }

  private async purgeExpired(): Promise<void> {
    try {
      let purged = 0;
      for (let n = await this.store.purgeExpired(); n > 0; n = await this.store.purgeExpired()) purged += n;
      if (purged) this.logger.log({ msg: 'purged expired idempotency records', purged });
    } catch (error) {
      this.logger.warn(`idempotency purge: ${(error as Error).message}`);
    }
  }
}

/**
 * Whether a record's result text is in the asking surface's shape. A caller
 * reaches one MCP surface only (an API key A, a grant's task B), and REST and
 * A2A beside it; a record from before REST (null) is that MCP surface's.
 */
function rendersAlike(recorded: string | null, asking: CallSurface): boolean {
  return recorded === asking || (recorded === null && (asking === 'agent' || asking === 'grant'));
}
