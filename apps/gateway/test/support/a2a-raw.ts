import type { Message, Task } from '@a2a-js/sdk';

/** A raw JSON-RPC answer to SendMessage: the result, or the error with its text (which the SDK client does not show). */
export interface RawSendAnswer {
  result?: { task?: Task; message?: Message };
  error?: { code: number; message: string };
}

/**
 * One A2A 1.0 JSON-RPC `SendMessage` by `fetch`, not the SDK client: for the error's text, or a
 * request to abort. The message names `skill`, its one part is `data`.
 */
export function sendMessageRaw(
  endpoint: string,
  apiKey: string,
  message: { messageId: string; skill: string; data: Record<string, unknown> },
  options: { returnImmediately?: boolean; signal?: AbortSignal } = {},
): Promise<Response> {
  const { messageId, skill, data } = message;
  return fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-agent-api-key': apiKey, 'a2a-version': '1.0' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: {
        message: { messageId, role: 'ROLE_USER', parts: [{ data }], metadata: { skill } },
        ...(options.returnImmediately !== undefined && {
          configuration: { returnImmediately: options.returnImmediately },
        }),
      },
    }),
    signal: options.signal,
  });
}
