import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  BusPattern,
  isDatabaseUnavailable,
  isReplicaDraining,
  waitRequestTimeout,
  withCallBudget,
  type BusResponse,
  type ChatMessage,
  type Deadline,
  type WaitResult,
} from '@mcpgw/contracts';
import { BusClient, BusTimeoutError } from '@mcpgw/bus';
import { METRICS_REGISTRY, hopTimer } from '@mcpgw/observability';
import type { Registry } from 'prom-client';
import { setTimeout as delay } from 'node:timers/promises';
import type { CancellableCall } from '../cancellation/call-cancellation.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import type { CallTime } from '../timeouts/call-time';
import { AgentTimeoutError } from './call-errors';
import type { CallWatch } from './call-watch';
import type { PreparedCall } from './call-shapes';
import { onBus } from './bus-steps';
import { postingKeyOf } from './chat-messages';

/**
 * The waiting half of a call: post and wait for the reply, slice by slice, and
 * wait again while a watched agent is alive. A wait survives a message service
 * replica that dies, drains or loses its database; the call's deadline ends it
 * (timeouts/README.md).
 */
@Injectable()
export class ReplyWaits {
  private readonly logger = new Logger(ReplyWaits.name);

  constructor(
    private readonly bus: BusClient,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.hop = hopTimer(registry, 'gateway');
  }

  /** Times hop `gateway` (/metrics): post and wait until the reply is in hand. */
  private readonly hop: () => () => void;

  /**
   * Post the message and wait for its reply, in slices of CALL_WAIT_SLICE_MS.
   * The replica holding the wait answers at the end of each slice; if it does
   * not (it died), the message is posted again: posting is idempotent, so any
   * replica joins the first posting (or, if it never got stored, stores it) and
   * the reply reaches it however the pod delivers it. A replica that shuts
   * down gives its waits back at once (ReplicaDrainingError): posted again the
   * same way, with no slice lost. A replica whose database is away holds the
   * post while it can and then says so (`database_unavailable`): posted again
   * after a pause, until the call's deadline, which then ends it as a timeout
   * (issue 45: an outage costs callers time, not errors). Each posting carries
   * the time the agent has left (`meta.timeout_ms`).
   */
  async postAndWait(
    message: ChatMessage,
    time: CallTime,
    agentDeadline: Deadline,
    requestId: string | undefined,
    detached: () => boolean,
    idempotency: PreparedCall['idempotency'],
  ): Promise<BusResponse<typeof BusPattern.PostAndWait> & { storedHere: boolean }> {
    const hopDone = this.hop();
    const fingerprint = idempotency?.fingerprint.toString('hex');
    const key = postingKeyOf(idempotency, this.env.IDEMPOTENCY_TTL_SECONDS);
    // Whether a post of this request stored the message: its later posts (each wait slice, a
    // hand-back, an outage) are duplicates of its own, not a join of another request's.
    let storedHere = false;
    for (let handedBack = 0, databaseAway = 0; ;) {
      const waitMs = time.nextWaitMs(this.env.CALL_WAIT_SLICE_MS);
      try {
        const posted = await this.bus.request(
          BusPattern.PostAndWait,
          // `fingerprint` and `key` undefined for an unkeyed call: JSON leaves them out.
          { envelope: withCallBudget(message, agentDeadline), timeout_ms: waitMs, fingerprint, key },
          waitRequestTimeout(waitMs),
          { requestId },
        );
        storedHere ||= !posted.duplicate;
        if (posted.result.status === 'replied') hopDone();
        if (posted.result.status === 'replied' || time.deadline.expired || detached()) return { ...posted, storedHere };
      } catch (error) {
        const draining = isReplicaDraining(error);
        const outage = isDatabaseUnavailable(error);
        const again = error instanceof BusTimeoutError || draining || outage;
        if (again && time.deadline.expired) throw new AgentTimeoutError(time.timeoutMs);
        if (!again || detached()) throw error;
        if (draining) await this.afterHandBack(++handedBack, message.id);
        else if (outage) await delay(Math.min(100 * ++databaseAway, 1_000, time.deadline.remainingMs()));
        else
          this.logger.warn({
            msg: 'no answer from the message service replica holding the wait; posting again',
            message_id: message.id,
          });
      }
    }
  }

  /**
   * A draining replica gave the wait back: ask again at once (another replica
   * takes it). Should the same wait be handed back again and again (every
   * replica draining), pause a little between tries instead of spinning.
   */
  private async afterHandBack(times: number, messageId: string): Promise<void> {
    this.logger.log({
      msg: 'the message service replica holding the wait is draining; waiting again',
      message_id: messageId,
    });
    if (times > 1) await delay(Math.min(50 * times, 1_000));
  }

  /**
   * While the agent keeps sending events, a timeout is not the end: wait again
   * for the time left since its last event, up to the call's limit
   * (CALL_TIMEOUT_MAX_MS from acceptance).
   */
  async waitWhileAlive(
    first: WaitResult,
    channelId: string,
    messageId: string,
    time: CallTime,
    watch: CallWatch,
    call: CancellableCall,
    detached: () => boolean,
  ): Promise<WaitResult> {
    let result = first;
    for (
      let waitMs = time.waitWhileAliveMs(watch.idleMs), handedBack = 0;
      result.status === 'timeout' && waitMs > 0 && !detached();
    ) {
      result = await call.unlessCancelled(
        onBus(async () => {
          try {
            return await this.bus.request(
              BusPattern.WaitForReply,
              { channel_id: channelId, message_id: messageId, timeout_ms: waitMs },
              waitRequestTimeout(waitMs),
            );
          } catch (error) {
            // Given back by a draining replica: still a timeout so far; wait again elsewhere.
            if (!isReplicaDraining(error)) throw error;
            await this.afterHandBack(++handedBack, messageId);
            return { status: 'timeout' } as const;
          }
        }),
      );
      waitMs = time.waitWhileAliveMs(watch.idleMs);
    }
    return result;
  }
}
