import { createHash } from 'node:crypto';

/** The UUID namespace of chat_messages made from A2A messages (a random constant of this gateway). */
const A2A_MESSAGE_NAMESPACE = Buffer.from('6f0c7f4e9d2b4a51a4c3e1b27d5f9a08', 'hex');

/**
 * The chat_message id of an A2A message: a name-based UUID (RFC 9562 v5) of the
 * agent, the caller and the messageId. The same message from the same caller is
 * always the same posting, which the message service never runs twice (it joins
 * the first), whether it was sent blocking, to return at once, or both; no other
 * caller's message can name it.
 */
export function chatMessageIdOf(agentId: string, callerId: string, messageId: string): string {
  const name = JSON.stringify([agentId, callerId, messageId]);
  const bytes = createHash('sha1').update(A2A_MESSAGE_NAMESPACE).update(name).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
