import { CallDetachedError } from './call-errors';

/**
 * A call a request stops waiting for while the agent goes on (`ExecuteOptions.detach`: MRTR
 * answers the client, and a retry continues the call).
 */

/** True once `detach` has resolved: the waits left running in the background stop at their next turn. */
export function whenDetached(detach: Promise<void> | undefined): () => boolean {
  let detached = false;
  void detach?.then(() => (detached = true));
  return () => detached;
}

/** The step, unless `detach` resolves first (then CallDetachedError; the step is left to end alone). */
export function detachable<T>(step: Promise<T>, detach: Promise<void> | undefined): Promise<T> {
  if (!detach) return step;
  step.catch(() => undefined);
  return Promise.race([
    step,
    detach.then(() => {
      throw new CallDetachedError();
    }),
  ]);
}
