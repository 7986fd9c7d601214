/**
 * Room kept in a bus message for what wraps a request's body: the chat_message
 * envelope (ids, sender, channel, timestamps, the call's budget), the
 * post-and-wait request around it, NATS and JetStream headers (trace context,
 * de-duplication id). A body re-encoded as the envelope's arguments is never
 * longer than its JSON as received (JSON.stringify escapes no more than a
 * client must), so this margin is all a call adds.
 */
export const ENVELOPE_HEADROOM_BYTES = 64 * 1024;

/**
 * The largest body the gateway reads: MCP_MAX_BODY_BYTES, but never more than
 * can travel on the bus (its `max_payload`, less the headroom). A body over it
 * is refused while it streams in, 413 with `-32600`, before anything is stored
 * or posted; otherwise a call the gateway accepted would fail at the bus as
 * "backend unavailable".
 */
export function mcpBodyLimit(configuredBytes: number, busMaxPayload: number): number {
  return Math.max(1024, Math.min(configuredBytes, busMaxPayload - ENVELOPE_HEADROOM_BYTES));
}
