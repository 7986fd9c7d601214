/**
 * What a cancel does to an idempotency record (idempotency/README.md has the
 * records), in one place:
 *
 * - The request that claimed the key cancels: the agent is told to stop (it
 *   owns the message). Unless a reply made it anyway (then that is the key's
 *   result), the key is freed, so a retry runs the call afresh instead of
 *   waiting on a message nobody will answer.
 * - A request that joined the first one's message (a retry) cancels: it stops
 *   its own wait and nothing else; the first call and the record go on.
 *
 * `lookOnce` posts the message again with no time to wait and renders the
 * reply it finds; it throws when there is none.
 */
export async function settleCancelledClaim(record: {
  lookOnce(): Promise<string>;
  complete(resultText: string): Promise<unknown>;
  release(): Promise<unknown>;
}): Promise<void> {
  try {
    await record.complete(await record.lookOnce());
  } catch {
    await record.release();
  }
}
