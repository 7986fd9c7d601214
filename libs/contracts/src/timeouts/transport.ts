/*
 * The two timeouts of the bus itself. Everything else about a call's time is
 * derived from its deadline; see apps/gateway/src/timeouts/README.md.
 */

/**
 * How long a bus request that does not wait for anything (post a message,
 * store a reply, register skills) may take before its sender gives up with
 * `BusTimeoutError`: the default of `BusClient.request`. Only a lost or dead
 * responder takes this long.
 */
export const BUS_REQUEST_TIMEOUT_MS = 5_000;

/**
 * The only margin on the call path. A wait request (`ms.channels.wait`,
 * `ms.messages.post_and_wait`) asks the message service to wait `timeout_ms`;
 * the service answers "timeout" at that point, after one last database read.
 * The bus request must outlive the wait by the time that answer needs to come
 * back (the read, the bus both ways), or the gateway would see a transport
 * timeout and take a healthy replica for a dead one. It is also how long,
 * beyond a wait slice, a dead replica holds up a call before it is re-posted.
 */
export const WAIT_ANSWER_ALLOWANCE_MS = 2_000;

/** The bus timeout of a wait request of `waitMs`: the wait, plus the allowance for its answer. */
export function waitRequestTimeout(waitMs: number): number {
  return waitMs + WAIT_ANSWER_ALLOWANCE_MS;
}
