/** A dependency a service needs to do its work (database, NATS, …). */
export interface ReadinessCheck {
  name: string;
  /** Resolves when healthy; rejects with the reason otherwise. */
  check(): Promise<void>;
}

export const READINESS_CHECKS = Symbol('READINESS_CHECKS');

export interface Readiness {
  ready: boolean;
  body: { status: 'ready' | 'not_ready'; checks: Record<string, string> };
}

const CHECK_TIMEOUT_MS = 2_000;

/** Run every check at once, each within a deadline, and name the ones that fail. */
export async function checkReadiness(checks: readonly ReadinessCheck[]): Promise<Readiness> {
  const results = await Promise.all(
    checks.map(async ({ name, check }) => {
      try {
        await withDeadline(check(), CHECK_TIMEOUT_MS);
        return [name, 'ok'] as const;
      } catch (error) {
        return [name, (error as Error).message || 'failed'] as const;
      }
    }),
  );
  const ready = results.every(([, state]) => state === 'ok');
  return { ready, body: { status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(results) } };
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error) => (clearTimeout(timer), reject(error)),
    );
  });
}
