import { CALL_ID_PATTERN } from '@mcpgw/contracts';
import { JsonRpcCode, type JsonRpcId } from '../protocol/json-rpc';

/** The request body of the grant surface, as its contract defines it (docs/grants.md). */
export type GrantRequest =
  | { method: 'tools/list'; id: JsonRpcId | null }
  | {
      method: 'tools/call';
      id: JsonRpcId | null;
      name: string;
      arguments: Record<string, unknown>;
      callId?: string;
      meta?: Record<string, unknown>;
    };

export type ParsedGrantRequest =
  { ok: true; request: GrantRequest } | { ok: false; id: JsonRpcId | null; code: number; message: string };

const TOP_LEVEL_FIELDS = new Set(['jsonrpc', 'id', 'method', 'params']);

/** Check a parsed body against the contract; nothing more lenient. Never throws. */
export function parseGrantRequest(body: unknown): ParsedGrantRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return invalid(null, JsonRpcCode.InvalidRequest, 'the body must be one JSON-RPC request object');
  }
  const message = body as Record<string, unknown>;
  const id = message.id;
  if (id !== undefined && typeof id !== 'string' && typeof id !== 'number') {
    return invalid(null, JsonRpcCode.InvalidRequest, 'id must be a string or a number');
  }
  const echo = (id ?? null) as JsonRpcId | null;
  const unknown = Object.keys(message).filter((field) => !TOP_LEVEL_FIELDS.has(field));
  if (unknown.length)
    return invalid(echo, JsonRpcCode.InvalidRequest, `unknown top-level field(s): ${unknown.join(', ')}`);
  if (message.jsonrpc !== '2.0') return invalid(echo, JsonRpcCode.InvalidRequest, 'jsonrpc must be "2.0"');
  if (typeof message.method !== 'string') return invalid(echo, JsonRpcCode.InvalidRequest, 'method must be a string');

  const params = message.params;
  if (message.method === 'tools/list') {
    const empty = params === undefined || params === null || (isObject(params) && Object.keys(params).length === 0);
    if (!empty)
      return invalid(echo, JsonRpcCode.InvalidParams, 'tools/list takes no params (omit them, or send null or {})');
    return { ok: true, request: { method: 'tools/list', id: echo } };
  }
  if (message.method !== 'tools/call') {
    return invalid(
      echo,
      JsonRpcCode.MethodNotFound,
      `unsupported method ${JSON.stringify(message.method)}: use tools/list or tools/call`,
    );
  }
  if (!isObject(params)) return invalid(echo, JsonRpcCode.InvalidParams, 'tools/call needs params with a tool name');
  if (typeof params.name !== 'string' || params.name.length === 0) {
    return invalid(echo, JsonRpcCode.InvalidParams, 'params.name must be a tool name from tools/list');
  }
  if (params.arguments !== undefined && !isObject(params.arguments)) {
    return invalid(echo, JsonRpcCode.InvalidParams, 'params.arguments must be an object');
  }
  if (params.call_id !== undefined && (typeof params.call_id !== 'string' || !CALL_ID_PATTERN.test(params.call_id))) {
    return invalid(
      echo,
      JsonRpcCode.InvalidParams,
      'params.call_id must be 1 to 128 printable ASCII characters, no spaces',
    );
  }
  if (params._meta !== undefined && !isObject(params._meta)) {
    return invalid(echo, JsonRpcCode.InvalidParams, 'params._meta must be an object');
  }
  return {
    ok: true,
    request: {
      method: 'tools/call',
      id: echo,
      name: params.name,
      arguments: (params.arguments as Record<string, unknown> | undefined) ?? {},
      callId: params.call_id as string | undefined,
      meta: params._meta as Record<string, unknown> | undefined,
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(id: JsonRpcId | null, code: number, message: string): ParsedGrantRequest {
  return { ok: false, id, code, message };
}
