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
  /** Made when first read: most skills never look (docs/benchmarks.md, "Issue 44 (errors nobody sees)"). */
  readonly signal: AbortSignal;
  /** Whether it was stopped, and why: read without making the signal. */
  readonly aborted: boolean;
  readonly reason: unknown;
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
  private readonly running = new Map<string, LazyAbort>();
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
    const stop = new LazyAbort();
    if (this.cancelledEarly.has(messageId)) stop.abort(new SkillStoppedError(messageId, 'cancelled'));
    const deadline = callDeadlineOf(message);
    const clearTimer = deadline?.abortOnExpiry(stop, () => this.expired(messageId));
    this.running.set(messageId, stop);
    return {
      get signal() {
        return stop.signal;
      },
      get aborted() {
        return stop.aborted;
      },
      get reason() {
        return stop.reason;
      },
      deadline,
      get stopped() {
        return stop.reason instanceof SkillStoppedError;
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

/**
 * An abort whose `AbortSignal` is made only when somebody reads it. A skill that
 * never looks at its signal (an echo) costs no AbortController: under load, making
 * one per message was 2.6 % of the agent pod's CPU.
 */
class LazyAbort {
  private controller?: AbortController;
  aborted = false;
  reason: unknown;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}
