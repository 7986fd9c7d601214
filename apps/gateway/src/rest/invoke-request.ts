import { CALL_ID_PATTERN } from '@mcpgw/contracts';
import { IDEMPOTENCY_ARGUMENT, takeIdempotencyKey } from '../idempotency/idempotency-key';
import { jsonDeeperThan, TOO_DEEP_MESSAGE } from '../mcp/transport/json-depth';

/** `POST …/invoke`: the body, checked. `arguments` already holds `attachments`, where the pipeline reads them. */
export interface InvokeRequest {
  tool: string;
  arguments: Record<string, unknown>;
  idempotencyKey?: string;
  callId?: string;
}

/** Why a body was refused: `malformed` is not JSON at all (400); `invalid` is JSON of the wrong shape (422). */
export type ParsedInvoke = { ok: true; request: InvokeRequest } | { ok: false; malformed: boolean; detail: string };

const FIELDS = new Set(['tool', 'arguments', 'attachments', IDEMPOTENCY_ARGUMENT, 'call_id']);
const ATTACHMENTS = 'attachments';

/**
 * The body of an invoke, as docs/rest.md documents it; nothing more lenient,
 * never a throw. `attachments` and `idempotency_key` sit beside `arguments`
 * here, inside them in MCP `tools/call`: each is taken from one place only.
 */
export function parseInvokeBody(text: string): ParsedInvoke {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, malformed: true, detail: 'the body is not valid JSON' };
  }
  if (jsonDeeperThan(text)) return invalid(TOO_DEEP_MESSAGE);
  if (!isObject(body)) return invalid('the body must be a JSON object: {"tool": …, "arguments": {…}}');
  const unknown = Object.keys(body).filter((field) => !FIELDS.has(field));
  if (unknown.length) return invalid(`unknown field(s): ${unknown.join(', ')}`);
  if (typeof body.tool !== 'string' || body.tool.length === 0) return invalid('tool must be a tool name');
  if (body.arguments !== undefined && !isObject(body.arguments)) return invalid('arguments must be an object');
  const args = { ...((body.arguments as Record<string, unknown> | undefined) ?? {}) };
  for (const field of [ATTACHMENTS, IDEMPOTENCY_ARGUMENT]) {
    if (field in args) return invalid(`${field} goes beside arguments, not inside them`);
  }
  if (body.attachments !== undefined) args[ATTACHMENTS] = body.attachments;
  const keyed = takeIdempotencyKey(
    body.idempotency_key === undefined ? args : { ...args, [IDEMPOTENCY_ARGUMENT]: body.idempotency_key },
  );
  if (!keyed.ok) return invalid(keyed.problem);
  if (body.call_id !== undefined && (typeof body.call_id !== 'string' || !CALL_ID_PATTERN.test(body.call_id))) {
    return invalid('call_id must be 1 to 128 printable ASCII characters, no spaces');
  }
  return {
    ok: true,
    request: {
      tool: body.tool,
      arguments: keyed.arguments,
      ...(keyed.key !== undefined && { idempotencyKey: keyed.key }),
      ...(body.call_id !== undefined && { callId: body.call_id }),
    },
  };
}

function invalid(detail: string): ParsedInvoke {
  return { ok: false, malformed: false, detail };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
