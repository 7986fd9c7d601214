/**
 * Whether the surface's answer is a function of the reply and the posting
 * alone, so that a retry can render the stored reply again and get the same
 * answer: A2A's (the agent's message, its contextId minted as of the posting:
 * ../a2a/a2a-messages.service.ts). Its records keep no result text, which
 * saves the completion's statement on every call (docs/benchmarks.md, "Issue
 * 38 (answers rendered again)"). MCP's and REST's answers are stored: MCP's
 * carries a handle minted when it is sent, REST's replay is byte for byte.
 * `surface` is a `CallSurface`, or a record's (null: an MCP surface's, from
 * before REST).
 */
export function rendersAgain(surface: string | null): boolean {
  return surface === 'a2a';
}

/**
 * What a retry with a record's key gets, for the operator's views: the stored
 * result, the reply rendered again (a record of a surface that `rendersAgain`),
 * or a wait on the call still in flight.
 */
export function retriesGet(storedResult: boolean, surface: string | null): 'stored' | 'rendered' | 'in flight' {
  if (storedResult) return 'stored';
  return rendersAgain(surface) ? 'rendered' : 'in flight';
}
