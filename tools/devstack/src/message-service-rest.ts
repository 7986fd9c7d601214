import type { ChatMessage } from '@mcpgw/contracts';
import { randomUUID } from 'node:crypto';

/** JSON to and from the message service's REST mirror, as tests drive it. */
export interface MessageServiceRest {
  post(path: string, body: unknown): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  get(path: string): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * The REST mirror of the message service replica at `url()` (read at each
 * request, so a test may move to another replica), with the stack's service token.
 */
export function messageServiceRest(url: () => string, token: string): MessageServiceRest {
  const send = (method: string, path: string, body?: unknown) =>
    fetch(`${url()}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then((r) => r.json());
  return { post: (path, body) => send('POST', path, body), get: (path) => send('GET', path) };
}

/** A `tool_call` chat_message from a test user on a channel of `agentId`: a new id, created now. */
export function toolCallMessage(
  channelId: string,
  agentId: string,
  tool: string,
  args: Record<string, unknown>,
  extra: Partial<ChatMessage> = {},
): ChatMessage {
  return {
    type: 'chat_message',
    id: randomUUID(),
    channel_id: channelId,
    agent_id: agentId,
    sender: { kind: 'user', id: 'test' },
    created_at: new Date().toISOString(),
    tool_call: { name: tool, arguments: args },
    ...extra,
  };
}
