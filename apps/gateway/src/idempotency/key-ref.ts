import { createHash } from 'node:crypto';

/** The UUID namespace of key refs (a random constant of this gateway; A2A's chat_message ids were made in it first). */
const KEY_NAMESPACE = Buffer.from('6f0c7f4e9d2b4a51a4c3e1b27d5f9a08', 'hex');

/**
 * The ref of a caller's idempotency key at an agent: a name-based UUID (RFC
 * 9562 v5) of the agent, the caller and the key. A keyed call's posting
 * carries it, and the message service lets one posting hold it at a time, so
 * that a posting of another id with the same key joins that one
 * (apps/message-service/src/messages/README.md, "One key, one posting"). One
 * key, one ref, whatever the surface: an MCP or REST `idempotency_key` and an
 * A2A messageId of the same string are the same key. No other caller's key can
 * name it.
 */
export function keyRefOf(agentId: string, callerId: string, key: string): string {
  const name = JSON.stringify([agentId, callerId, key]);
  const bytes = createHash('sha1').update(KEY_NAMESPACE).update(name).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
