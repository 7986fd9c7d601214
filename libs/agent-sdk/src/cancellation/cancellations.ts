import { AgentCancel, callDeadlineOf, type ChatMessage, type Deadline } from '@mcpgw/contracts';
import type { BusClient, BusSubscription } from '@mcpgw/bus/core';
import { RecentlySeen } from '../inbox/recently-seen';
import type { AgentLogger } from '../logger';

/**
 * Why a skill was stopped for its caller: the caller cancelled, or the call's
 * deadline passed (nobody waits for the reply any more). Either way the
 * message is done: no reply, no redelivery.
 */
export class SkillStoppedError extends Error {
  constructor(
    readonly messageId: string,
    readonly why: 'cancelled' | 'deadline',
  ) {
    super(why === 'cancelled' ? `call ${messageId} was cancelled` : `call ${messageId} ran out of time`);
    this.name = 'SkillStoppedError';
  }
}

/** One message while its skill runs: the signal that stops it, and why it stopped. */
export interface TrackedCall {
  signal: AbortSignal;
  /** The call's deadline here, when the message carried one. */
  deadline?: Deadline;
  /** True once the caller cancelled or the deadline passed (not when the agent stops). */
  readonly stopped: boolean;
  done(): void;
}

/**
 * Every rule about stopping a skill (the story across the apps is
 * apps/gateway/src/cancellation/README.md). Cancel requests for this agent's
 * messages reach every instance (a fan-out subscription); the one running the
 * message aborts its skill. A cancel that arrives before its message is
 * remembered, so the message is dropped. The message's deadline
 * (`meta.timeout_ms`, anchored on arrival) aborts it the same way, with one
 * timer per running message.
 */
export class Cancellations {
  private readonly running = new Map<string, AbortController>();
  private readonly cancelledEarly = new RecentlySeen(10_000);
  private subscription?: BusSubscription;

  constructor(
    private readonly bus: BusClient,
    private readonly agentId: string,
    private readonly logger: AgentLogger,
  ) {}

  start(): void {
    this.subscription = this.bus.subscribe(
      AgentCancel.at(this.agentId),
      ({ payload }) => this.cancel(payload.message_id, payload.reason),
      { essential: true },
    );
  }

  stop(): void {
    this.subscription?.unsubscribe();
  }

  /** Abort every running skill (the agent is stopping): those that stop are delivered again (a finished output is kept). */
  abortAll(reason: Error): void {
    for (const controller of this.running.values()) controller.abort(reason);
  }

  /**
   * A message begins: a signal that aborts when the caller cancels it, when its
   * deadline passes (at once, if it arrived too late) or when the agent stops.
   * `done` forgets it and clears its timer.
   */
  track(message: Pick<ChatMessage, 'id' | 'meta'>): TrackedCall {
    const messageId = message.id;
    const controller = new AbortController();
    if (this.cancelledEarly.has(messageId)) controller.abort(new SkillStoppedError(messageId, 'cancelled'));
    const deadline = callDeadlineOf(message);
    const clearTimer = deadline?.abortOnExpiry(controller, () => this.expired(messageId));
    this.running.set(messageId, controller);
    return {
      signal: controller.signal,
      deadline,
      get stopped() {
        return controller.signal.reason instanceof SkillStoppedError;
      },
      done: () => {
        clearTimer?.();
        this.running.delete(messageId);
      },
    };
  }

  private cancel(messageId: string, reason?: string): void {
    const controller = this.running.get(messageId);
    if (!controller) return this.cancelledEarly.add(messageId, true);
    this.logger.log({ msg: 'cancelling', message_id: messageId, reason });
    controller.abort(new SkillStoppedError(messageId, 'cancelled'));
  }

  private expired(messageId: string): SkillStoppedError {
    this.logger.log({ msg: 'deadline passed; stopping', message_id: messageId });
    return new SkillStoppedError(messageId, 'deadline');
  }
}
