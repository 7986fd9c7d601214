import { Deadline } from '@mcpgw/contracts';
import type { GatewayEnv } from '../config/gateway.env';

/** `_meta` key a call may use to ask for another reply timeout (tests use it; so may impatient clients). */
export const TIMEOUT_META_KEY = 'mcpgw/timeoutMs';

/** The shortest timeout a call may ask for. */
const MIN_CALL_TIMEOUT_MS = 100;

type TimeoutSettings = Pick<GatewayEnv, 'CALL_TIMEOUT_MS' | 'CALL_TIMEOUT_MAX_MS'>;

/** The call's timeout: CALL_TIMEOUT_MS, or what `_meta` asks for within [100 ms, CALL_TIMEOUT_MAX_MS]. */
export function callTimeout(meta: unknown, defaultMs: number, maxMs: number): number {
  const asked = Number((meta as Record<string, unknown> | undefined)?.[TIMEOUT_META_KEY]);
  if (!Number.isFinite(asked) || asked <= 0) return defaultMs;
  return Math.min(Math.max(Math.floor(asked), MIN_CALL_TIMEOUT_MS), maxMs);
}

/**
 * The time of one call, fixed once, when the gateway accepts it; every wait of
 * the call and the agent's own deadline are derived from it (README.md beside
 * this file has the rules and every timeout of the system).
 *
 * - `deadline`: when the caller stops waiting (its timeout from acceptance).
 * - `limit`: CALL_TIMEOUT_MAX_MS from acceptance, the latest anyone waits for
 *   the reply: a watched call's wait is extended by the agent's progress up to
 *   here, and a keyed call's reply, kept for its retries, may land until here.
 */
export class CallTime {
  private constructor(
    readonly timeoutMs: number,
    readonly deadline: Deadline,
    readonly limit: Deadline,
  ) {}

  /** A new call, with the timeout its `_meta` asks for (or the default). */
  static accept(meta: unknown, env: TimeoutSettings): CallTime {
    return CallTime.of(callTimeout(meta, env.CALL_TIMEOUT_MS, env.CALL_TIMEOUT_MAX_MS), env);
  }

  /** A new call with this timeout (already clamped by the caller). */
  static of(timeoutMs: number, env: Pick<TimeoutSettings, 'CALL_TIMEOUT_MAX_MS'>): CallTime {
    return new CallTime(
      timeoutMs,
      Deadline.after(timeoutMs),
      Deadline.after(Math.max(timeoutMs, env.CALL_TIMEOUT_MAX_MS)),
    );
  }

  /** No time at all: one look for a reply that is already there. */
  static none(): CallTime {
    const now = Deadline.after(0);
    return new CallTime(0, now, now);
  }

  /**
   * How long the agent may work on the message: as long as anyone may still
   * wait for its reply. That is the caller's deadline, unless the reply may be
   * waited on longer: the agent's progress extends a watched call, and a keyed
   * call's reply is its retries' result (then the limit).
   */
  agentDeadline(options: { watched: boolean; keepsResult: boolean }): Deadline {
    return options.watched || options.keepsResult ? this.limit : this.deadline;
  }

  /** The next wait: what is left of the call, in slices of `sliceMs` (a dead replica costs one slice, not the call). */
  nextWaitMs(sliceMs: number): number {
    return Math.min(this.deadline.remainingMs(), sliceMs);
  }

  /**
   * A watched call after its first wait timed out: the time left since the
   * agent's last event, within the limit; 0 when the call is over.
   */
  waitWhileAliveMs(idleMs: number): number {
    return Math.max(0, Math.min(this.timeoutMs - idleMs, this.limit.remainingMs()));
  }
}
