import { keyRefOf } from '../idempotency/key-ref';

/**
 * The chat_message id of an A2A message: its messageId's key ref
 * (`../idempotency/key-ref.ts`), a name-based UUID of the agent, the caller and
 * the messageId. The same message from the same caller is always the same
 * posting, which the message service never runs twice (it joins the first),
 * whether it was sent blocking, to return at once, or both; no other caller's
 * message can name it. (The ids made before key refs were made the same way.)
 */
export function chatMessageIdOf(agentId: string, callerId: string, messageId: string): string {
  return keyRefOf(agentId, callerId, messageId);
}
