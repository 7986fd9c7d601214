import { callIdOf, type ChatMessage, type PostingKey } from '@mcpgw/contracts';
import { randomUUID } from 'node:crypto';
import type { CallRequest, PreparedCall } from './call-shapes';

/**
 * A new chat_message from an MCP client, on the conversation's channel (or a
 * new one). A tool call (and a conversational message) carries its call id:
 * the caller's, or the gateway's from the message id.
 */
export function chatMessage(
  request: Pick<CallRequest, 'agentId' | 'callerId' | 'channelId' | 'messageId'>,
  body: Pick<
    ChatMessage,
    'tool_call' | 'text' | 'data' | 'call_id' | 'resource_read' | 'prompt_get' | 'complete' | 'attachments' | 'meta'
  >,
): ChatMessage {
  const id = request.messageId ?? randomUUID();
  const { call_id, ...rest } = body;
  return {
    type: 'chat_message',
    id,
    channel_id: request.channelId,
    agent_id: request.agentId,
    sender: { kind: 'mcp_client', id: request.callerId },
    created_at: new Date().toISOString(),
    // A conversational message (`text`, no tool) is a call too: one call id, as a tool call's.
    ...(body.tool_call || body.text !== undefined ? { call_id: call_id ?? callIdOf(id) } : {}),
    ...rest,
  };
}

/** The call id a message carries; one posted before call ids (an old idempotency record) gets the one its id gives. */
export function callIdFor(message: ChatMessage): string {
  return message.call_id ?? callIdOf(message.id);
}

/**
 * What a keyed call's posting carries of its key (`PostingKey`: its ref, the key's time to live,
 * and whether it renews the key); nothing for a call without a ref.
 */
export function postingKeyOf(idempotency: PreparedCall['idempotency'], ttlSeconds: number): PostingKey | undefined {
  if (!idempotency?.ref) return undefined;
  return { ref: idempotency.ref, ttl_s: ttlSeconds, ...(idempotency.renews && { renews: true }) };
}
