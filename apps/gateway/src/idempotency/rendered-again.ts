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
