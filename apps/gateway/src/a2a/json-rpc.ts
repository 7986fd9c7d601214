import { jsonDeeperThan, TOO_DEEP_MESSAGE } from '../mcp/transport/json-depth';
import type { A2aFailure } from './a2a-errors';
import { isObject } from './send-message';
import { A2A_VERSION } from './wire';

export type JsonRpcId = string | number | null;

export interface JsonRpcCall {
  id: JsonRpcId;
  method: string;
  params: unknown;
}

/** A JSON-RPC 2.0 request, or why it is not one (with the id to answer with, when it could be read). */
export type ParsedRpc = { ok: true; call: JsonRpcCall } | { ok: false; id: JsonRpcId; failure: A2aFailure };

/** One request (A2A has no batches); never a throw. */
export function parseJsonRpc(text: string): ParsedRpc {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, id: null, failure: { kind: 'parse', detail: 'the body is not valid JSON' } };
  }
  if (jsonDeeperThan(text))
    return { ok: false, id: null, failure: { kind: 'invalid_request', detail: TOO_DEEP_MESSAGE } };
  if (!isObject(body)) return invalid(null, 'a JSON-RPC 2.0 request object');
  const id = body.id;
  if (typeof id !== 'string' && typeof id !== 'number' && id !== null)
    return invalid(null, 'id must be a string or number');
  if (body.jsonrpc !== '2.0') return invalid(id, 'jsonrpc must be "2.0"');
  if (typeof body.method !== 'string') return invalid(id, 'method must be a string');
  return { ok: true, call: { id, method: body.method, params: body.params ?? {} } };
}

function invalid(id: JsonRpcId, detail: string): ParsedRpc {
  return { ok: false, id, failure: { kind: 'invalid_request', detail } };
}

/** `{"jsonrpc":"2.0","id":…,"result":<text>}`: the result is spliced in as it was rendered (and stored). */
export function resultText(id: JsonRpcId, result: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`;
}

/** The version a request asks for: `A2A-Version`, absent being 0.3 (the spec's rule). */
export function requestedVersion(header: string | string[] | undefined): string {
  const version = (Array.isArray(header) ? header[0] : header)?.trim() || '0.3';
  return version === '1' ? A2A_VERSION : version;
}

/** Why a version cannot be served on a binding that serves only `served`; undefined when it can. */
export function checkVersion(version: string, served: readonly string[] = [A2A_VERSION]): A2aFailure | undefined {
  return served.includes(version) ? undefined : { kind: 'version_not_supported', version };
}
