/**
 * A dependency or a part of a service it needs to do its work (database, migrations,
 * NATS, its consumers…). `/ready` shows each check's state to whoever can reach the
 * management port, so a state is never an error's text (a driver's message may name
 * hosts, users or SQL): a check says why it is not ready in its own words.
 */
export interface ReadinessCheck {
  name: string;
  /**
   * Resolves with nothing when ready, or with a short reason of the check's own
   * (e.g. `'reconnecting'`, `'not applied: Grants1764470000000'`) when not.
   * Rejects on an unexpected failure: shown as `unavailable`, its error kept for the log.
   */
  check(): Promise<string | void>;
}

export const READINESS_CHECKS = Symbol('READINESS_CHECKS');

/** What /ready shows for a check that rejected or did not answer in time. */
export const UNAVAILABLE = 'unavailable';
export const NO_ANSWER = 'no answer in time';

export interface Readiness {
  ready: boolean;
  body: { status: 'ready' | 'not_ready'; checks: Record<string, string> };
  /** The errors of the checks that rejected, by check name: for the log, never the body. */
  causes: Record<string, unknown>;
}

const CHECK_TIMEOUT_MS = 2_000;

/** Run every check at once, each within a deadline, and name the ones that fail. */
export async function checkReadiness(
  checks: readonly ReadinessCheck[],
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<Readiness> {
  const causes: Record<string, unknown> = {};
  const results = await Promise.all(
    checks.map(async ({ name, check }) => {
      try {
        const reason = await withDeadline(check(), timeoutMs);
        return [name, typeof reason === 'string' && reason ? reason : 'ok'] as const;
      } catch (error) {
        causes[name] = error;
        return [name, error === DEADLINE ? NO_ANSWER : UNAVAILABLE] as const;
      }
    }),
  );
  const ready = results.every(([, state]) => state === 'ok');
  return { ready, body: { status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(results) }, causes };
}

const DEADLINE = new Error('readiness check timed out');

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(DEADLINE), ms);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error) => (clearTimeout(timer), reject(error)),
    );
  });
}
