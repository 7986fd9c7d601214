/** JSON-RPC 2.0 as MCP uses it: the shapes, the standard codes, and a classifier. */

export type JsonRpcId = string | number;

export const JsonRpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
} as const;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export type JsonRpcResponse =
  | { jsonrpc: '2.0'; id: JsonRpcId; result: unknown }
  | { jsonrpc: '2.0'; id: JsonRpcId | null; error: JsonRpcErrorObject };

export type Classified =
  | { kind: 'request'; message: JsonRpcRequest }
  | { kind: 'notification'; message: JsonRpcNotification }
  | { kind: 'response'; message: { id: JsonRpcId; result?: unknown; error?: unknown } }
  | { kind: 'invalid'; id: JsonRpcId | null; reason: string };

export function result(id: JsonRpcId, value: unknown): JsonRpcResponse {
  return { jsonrpc: '2.0', id, result: value };
}

/**
 * A response whose result is already JSON text (an idempotent replay must send
 * the stored bytes, not a re-serialisation of them).
 */
export function rawResult(id: JsonRpcId, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`;
}

/**
 * A batch's answer: the responses as one JSON array. Those that are JSON text
 * already (tool results) go in as they are, so no result is parsed to be
 * written again.
 */
export function batchText(responses: readonly (JsonRpcResponse | string)[]): string {
  return `[${responses.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join(',')}]`;
}

export function failure(id: JsonRpcId | null, code: number, message: string, data?: unknown): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

/** What one parsed JSON value is, as JSON-RPC. Never throws. */
export function classify(value: unknown): Classified {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { kind: 'invalid', id: null, reason: 'a JSON-RPC message must be an object' };
  }
  const message = value as Record<string, unknown>;
  const id = isId(message.id) ? message.id : null;
  if (message.jsonrpc !== '2.0') return { kind: 'invalid', id, reason: 'jsonrpc must be "2.0"' };
  if ('id' in message && !isId(message.id)) {
    return { kind: 'invalid', id: null, reason: 'id must be a string or an integer' };
  }
  if (message.method === undefined && ('result' in message || 'error' in message) && 'id' in message) {
    return { kind: 'response', message: message as { id: JsonRpcId; result?: unknown; error?: unknown } };
  }
  if (typeof message.method !== 'string' || message.method.length === 0) {
    return { kind: 'invalid', id, reason: 'method must be a non-empty string' };
  }
  if (
    message.params !== undefined &&
    (typeof message.params !== 'object' || message.params === null || Array.isArray(message.params))
  ) {
    return { kind: 'invalid', id, reason: 'params must be an object' };
  }
  return 'id' in message
    ? { kind: 'request', message: message as unknown as JsonRpcRequest }
    : { kind: 'notification', message: message as unknown as JsonRpcNotification };
}

function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));
}
