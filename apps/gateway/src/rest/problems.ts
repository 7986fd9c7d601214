import type { FastifyReply } from 'fastify';
import type { CallError, InvalidArgumentsError } from '../calls/call-errors';
import { JsonRpcCode } from '../mcp/protocol/json-rpc';
import { QUOTA_EXCEEDED_CODE, retryAfterHeader, type QuotaRefusal } from '../quotas/quota-refusal';

/** Everything the REST surface can refuse or fail with, as values; `restProblem` maps each to its wire. */
export type RestFailure =
  | { kind: 'call'; error: CallError }
  | { kind: 'malformed'; detail: string }
  | { kind: 'invalid_request'; detail: string }
  | { kind: 'unauthorized'; status: 401 | 403 | 429 | 503; reason: string; challenge?: string }
  | { kind: 'credential_unavailable'; tool: string; missing: string[] }
  | { kind: 'quota'; refusal: QuotaRefusal }
  | { kind: 'not_found'; detail: string }
  | { kind: 'unconfigured'; detail: string }
  | { kind: 'internal' };

/** An RFC 9457 problem: the members it defines, `code` (the MCP error code), and per-problem extensions. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: number;
  [extension: string]: unknown;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
/** Problem types are URNs: stable names to match on, documented in docs/rest.md ("Errors"). */
export const PROBLEM_TYPE_PREFIX = 'urn:mcpgw:problem:';

const UNAUTHORIZED_CODE = -32001;
const AGENT_REPLY_TIMEOUT_CODE = -32003;

/**
 * The one place the REST surface turns a failure into its wire: an HTTP status,
 * an RFC 9457 body naming the MCP error code surface A would send (`code`), and
 * the headers the status calls for. Surface A's codes and meanings, HTTP's statuses:
 * unknown tool 404 -32601, invalid arguments 422 -32602 (with the schema's errors),
 * agent timeout 504 -32003, a quota 429 with Retry-After, auth 401/403, the rest 500/503.
 * A tool error the model could correct is no failure: a 200 with `is_error: true`.
 */
export function restProblem(
  failure: RestFailure,
  requestId: string,
): { problem: Problem; headers: Record<string, string> } {
  const problem = (status: number, name: string, title: string, code: number, detail: string, extra = {}) => ({
    problem: { type: `${PROBLEM_TYPE_PREFIX}${name}`, title, status, detail, code, ...extra },
    headers: {},
  });
  switch (failure.kind) {
    case 'malformed':
      return problem(400, 'malformed-body', 'Malformed body', JsonRpcCode.ParseError, failure.detail);
    case 'invalid_request':
      return problem(422, 'invalid-request', 'Invalid request', JsonRpcCode.InvalidParams, failure.detail);
    case 'not_found':
      return problem(404, 'not-found', 'Not found', JsonRpcCode.InvalidParams, failure.detail);
    case 'unauthorized': {
      // 429: the client's unknown opaque tokens are over their introspection rate (../oauth/).
      const answer =
        failure.status === 503
          ? problem(503, 'unavailable', 'Service unavailable', JsonRpcCode.InternalError, failure.reason)
          : failure.status === 429
            ? // Too many unknown tokens from this address (oauth/README.md, "Opaque tokens").
              problem(429, 'too-many-attempts', 'Too many requests', UNAUTHORIZED_CODE, failure.reason)
            : problem(failure.status, 'unauthorized', 'Unauthorized', UNAUTHORIZED_CODE, failure.reason);
      return { ...answer, headers: failure.challenge ? { 'www-authenticate': failure.challenge } : {} };
    }
    case 'credential_unavailable':
      return problem(
        403,
        'credential-unavailable',
        'Credential unavailable',
        UNAUTHORIZED_CODE,
        `${failure.tool} needs credential(s) not available to this task: ${failure.missing.join(', ')}`,
      );
    case 'quota':
      return {
        ...problem(429, 'quota-exceeded', 'Too many requests', QUOTA_EXCEEDED_CODE, failure.refusal.message, {
          ...failure.refusal.data,
        }),
        headers: retryAfterHeader(failure.refusal),
      };
    case 'unconfigured':
      return problem(503, 'unavailable', 'Service unavailable', JsonRpcCode.InternalError, failure.detail);
    case 'internal':
      return internal(requestId);
    case 'call':
      break;
  }
  const { error } = failure;
  switch (error.kind) {
    case 'tool_not_found':
      return problem(404, 'tool-not-found', 'Tool not found', JsonRpcCode.MethodNotFound, error.message);
    case 'invalid_arguments':
      return problem(422, 'invalid-arguments', 'Invalid arguments', JsonRpcCode.InvalidParams, error.message, {
        errors: (error as InvalidArgumentsError).problems,
      });
    case 'idempotency_key_reused':
      return problem(422, 'idempotency-key-reused', 'Idempotency key reused', JsonRpcCode.InvalidParams, error.message);
    case 'conversation_gone':
      // A retry on REST of a key whose call's conversation retention has since deleted.
      return problem(410, 'conversation-gone', 'Gone', JsonRpcCode.InvalidParams, error.message);
    case 'agent_timeout':
      return problem(504, 'agent-timeout', 'Agent reply timeout', AGENT_REPLY_TIMEOUT_CODE, 'Agent reply timeout');
    case 'backend_unavailable':
      return {
        ...problem(
          503,
          'unavailable',
          'Service unavailable',
          JsonRpcCode.InternalError,
          'the agent backend is unavailable: retry later',
        ),
        headers: { 'retry-after': '1' },
      };
    default:
      return internal(requestId);
  }
}

function internal(requestId: string) {
  return {
    problem: {
      type: `${PROBLEM_TYPE_PREFIX}internal`,
      title: 'Internal error',
      status: 500,
      detail: `Internal error (incident ${requestId})`,
      code: JsonRpcCode.InternalError,
      request_id: requestId,
    },
    headers: {},
  };
}

/** Write the failure as its problem; nothing when the client has gone. */
export function sendProblem(reply: FastifyReply, failure: RestFailure, requestId: string): void {
  if (reply.sent || reply.raw.destroyed) return;
  const { problem, headers } = restProblem(failure, requestId);
  void reply
    .status(problem.status)
    .headers(headers)
    .header('content-type', PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(problem));
}
