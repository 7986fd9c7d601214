/**
 * `tools/call` on either surface of the gateway with the gateway's own
 * arguments, `attachments` (files uploaded with FilesApi) and
 * `idempotency_key`, in the shape the source documents give:
 * `arguments: {…, attachments: [{file_id, filename?}], idempotency_key}`.
 */

export interface Attachment {
  /** From `FilesApi.upload` (`file_…`). */
  file_id: string;
  /** The name the agent sees; default the uploaded one. */
  filename?: string;
  content_type?: string;
}

export interface ToolCall {
  name: string;
  arguments?: Record<string, unknown>;
  attachments?: Attachment[];
  /** The same key again returns the stored result without running the tool again. */
  idempotencyKey?: string;
}

/** A JSON-RPC error of the gateway (HTTP status, JSON-RPC code, message). */
export class ToolCallError extends Error {
  constructor(
    readonly status: number,
    readonly code: number | undefined,
    message: string,
  ) {
    super(`${status}${code === undefined ? '' : ` ${code}`}: ${message}`);
    this.name = 'ToolCallError';
  }
}

/** The MCP result of a call, and whether the gateway replayed a stored one (idempotency key). */
export interface ToolCallResult<T = Record<string, unknown>> {
  result: {
    content: { type: string; text?: string }[];
    structuredContent?: T;
    isError?: boolean;
  };
  replayed: boolean;
}

interface Surface {
  url: string;
  headers: Record<string, string>;
  fetch?: typeof fetch;
}

/** Surface A: `POST {baseUrl}/{agentId}/mcp` with an agent API key (no session: a conversation of one call). */
export function callAgentTool<T = Record<string, unknown>>(
  options: { baseUrl: string; agentId: string; apiKey: string; fetch?: typeof fetch },
  call: ToolCall,
): Promise<ToolCallResult<T>> {
  return post<T>(
    {
      url: `${trimmed(options.baseUrl)}/${encodeURIComponent(options.agentId)}/mcp`,
      headers: { 'x-agent-api-key': options.apiKey },
      fetch: options.fetch,
    },
    call,
  );
}

/** Surface B: `POST {baseUrl}/workspaces/{ws}/agents/{agent}/mcp/http` with a task's RuntimeGrant. */
export function callTaskTool<T = Record<string, unknown>>(
  options: { baseUrl: string; workspaceId: string; agentId: string; grant: string; fetch?: typeof fetch },
  call: ToolCall & { callId?: string },
): Promise<ToolCallResult<T>> {
  const { baseUrl, workspaceId, agentId, grant } = options;
  return post<T>(
    {
      url: `${trimmed(baseUrl)}/workspaces/${encodeURIComponent(workspaceId)}/agents/${encodeURIComponent(agentId)}/mcp/http`,
      headers: { authorization: `Bearer ${grant}` },
      fetch: options.fetch,
    },
    call,
    call.callId,
  );
}

/** The call's `arguments`, with the gateway's own fields added. */
export function toolArguments(call: ToolCall): Record<string, unknown> {
  return {
    ...call.arguments,
    ...(call.attachments && { attachments: call.attachments }),
    ...(call.idempotencyKey !== undefined && { idempotency_key: call.idempotencyKey }),
  };
}

let nextId = 1;

async function post<T>(surface: Surface, call: ToolCall, callId?: string): Promise<ToolCallResult<T>> {
  const response = await (surface.fetch ?? fetch)(surface.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...surface.headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method: 'tools/call',
      params: { name: call.name, ...(callId !== undefined && { call_id: callId }), arguments: toolArguments(call) },
    }),
  });
  const text = await response.text();
  let body: { result?: ToolCallResult<T>['result']; error?: { code?: number; message?: string } } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    throw new ToolCallError(response.status, undefined, text.slice(0, 200) || response.statusText);
  }
  if (body.error || !body.result) {
    throw new ToolCallError(response.status, body.error?.code, body.error?.message ?? 'no result');
  }
  return { result: body.result, replayed: response.headers.get('idempotent-replayed') === 'true' };
}

function trimmed(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '');
}
