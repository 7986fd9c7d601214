import type { CallError, InvalidArgumentsError, ToolNotFoundError } from '../calls/call-errors';
import type { QuotaRefusal } from '../quotas/quota-refusal';
import { retryAfterHeader } from '../quotas/quota-refusal';

/** Everything the A2A surface can refuse or fail with, as values; `a2aProblem` maps each to both bindings. */
export type A2aFailure =
  | { kind: 'call'; error: CallError }
  | { kind: 'parse'; detail: string }
  | { kind: 'invalid_request'; detail: string }
  | { kind: 'method_not_found'; method: string }
  | { kind: 'invalid_params'; detail: string }
  | { kind: 'unsupported_operation'; detail: string }
  | { kind: 'version_not_supported'; version: string }
  | { kind: 'task_not_found'; taskId: string }
  | { kind: 'push_config_not_found'; taskId: string; configId: string }
  | { kind: 'task_not_cancelable'; taskId: string; state: string }
  | { kind: 'extended_card_not_configured' }
  | { kind: 'agent_not_found'; agentId: string }
  | { kind: 'unauthorized'; status: 401 | 403 | 429 | 503; reason: string; challenge?: string }
  | { kind: 'credential_unavailable'; skill: string; missing: string[] }
  | { kind: 'quota'; refusal: QuotaRefusal }
  | { kind: 'internal' };

/**
 * The gateway's own JSON-RPC codes, in the implementation-defined server range
 * (-32000 to -32099) outside the A2A codes (-32001 to -32009), each named after
 * the HTTP status the HTTP+JSON binding answers with (docs/a2a.md, "Errors").
 */
export const GatewayA2aCode = {
  Unauthenticated: -32041,
  PermissionDenied: -32043,
  QuotaExceeded: -32029,
  Unavailable: -32053,
  AgentTimeout: -32054,
} as const;

/** One failure, ready for either binding. */
export interface A2aProblem {
  /** HTTP status on the HTTP+JSON binding (and on JSON-RPC when `transport`). */
  status: number;
  /** The `google.rpc.Status` name of the HTTP+JSON error body. */
  grpcStatus: string;
  /** The JSON-RPC error code. */
  code: number;
  message: string;
  /** `google.rpc.ErrorInfo` reason: the spec's (`TASK_NOT_FOUND`, …) or the gateway's. */
  reason: string;
  domain: 'a2a-protocol.org' | 'mcpgw';
  /** Further `google.rpc` details (field violations). */
  details?: object[];
  /** True for failures of the HTTP request itself (credentials, quota): JSON-RPC sends the HTTP status too. */
  transport?: boolean;
  headers: Record<string, string>;
}

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';

/**
 * The one place the A2A surface turns a failure into its wire. The spec's errors
 * keep the spec's codes and reasons (a skill the caller may not use, or that does
 * not exist, and arguments its schema refuses are `-32602` / 400
 * `INVALID_ARGUMENT`; another caller's task is `-32001`, as an unknown one);
 * the gateway's own (credentials, quotas, an agent that does not answer) use
 * `GatewayA2aCode` and domain `mcpgw`.
 */
export function a2aProblem(failure: A2aFailure, requestId: string): A2aProblem {
  const spec = (status: number, grpcStatus: string, code: number, reason: string, message: string) =>
    ({ status, grpcStatus, code, reason, message, domain: 'a2a-protocol.org', headers: {} }) as A2aProblem;
  const own = (status: number, grpcStatus: string, code: number, reason: string, message: string) =>
    ({ status, grpcStatus, code, reason, message, domain: 'mcpgw', headers: {} }) as A2aProblem;
  switch (failure.kind) {
    case 'parse':
      return spec(400, 'INVALID_ARGUMENT', -32700, 'INVALID_PARAMS', `Parse error: ${failure.detail}`);
    case 'invalid_request':
      return spec(400, 'INVALID_ARGUMENT', -32600, 'INVALID_PARAMS', `Invalid request: ${failure.detail}`);
    case 'method_not_found':
      return spec(404, 'NOT_FOUND', -32601, 'METHOD_NOT_FOUND', `Method not found: ${failure.method}`);
    case 'invalid_params':
      return spec(400, 'INVALID_ARGUMENT', -32602, 'INVALID_PARAMS', failure.detail);
    case 'unsupported_operation':
      return spec(400, 'FAILED_PRECONDITION', -32004, 'UNSUPPORTED_OPERATION', failure.detail);
    case 'version_not_supported':
      return spec(
        400,
        'FAILED_PRECONDITION',
        -32009,
        'VERSION_NOT_SUPPORTED',
        `A2A version ${failure.version} is not supported: send A2A-Version: 1.0`,
      );
    case 'task_not_cancelable':
      return spec(
        400,
        'FAILED_PRECONDITION',
        -32002,
        'TASK_NOT_CANCELABLE',
        `Task ${failure.taskId} cannot be canceled: it is ${failure.state}`,
      );
    case 'agent_not_found':
      return own(404, 'NOT_FOUND', -32601, 'AGENT_NOT_FOUND', `no agent ${failure.agentId}`);
    case 'extended_card_not_configured':
      return spec(
        400,
        'FAILED_PRECONDITION',
        -32007,
        'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
        'this agent has no extended card: its card is the whole of it',
      );
    case 'task_not_found':
      return spec(404, 'NOT_FOUND', -32001, 'TASK_NOT_FOUND', `Task not found: ${failure.taskId}`);
    case 'push_config_not_found':
      // As the SDK's own server answers it: the task's config that does not exist is TaskNotFoundError.
      return spec(
        404,
        'NOT_FOUND',
        -32001,
        'TASK_NOT_FOUND',
        `Push notification config ${failure.configId} not found for task ${failure.taskId}`,
      );
    case 'unauthorized': {
      const problem = {
        401: () => own(401, 'UNAUTHENTICATED', GatewayA2aCode.Unauthenticated, 'UNAUTHENTICATED', failure.reason),
        403: () => own(403, 'PERMISSION_DENIED', GatewayA2aCode.PermissionDenied, 'PERMISSION_DENIED', failure.reason),
        429: () => own(429, 'RESOURCE_EXHAUSTED', GatewayA2aCode.QuotaExceeded, 'TOO_MANY_REQUESTS', failure.reason),
        503: () => own(503, 'UNAVAILABLE', GatewayA2aCode.Unavailable, 'UNAVAILABLE', failure.reason),
      }[failure.status]();
      const headers: Record<string, string> = failure.challenge ? { 'www-authenticate': failure.challenge } : {};
      return { ...problem, transport: true, headers };
    }
    case 'credential_unavailable':
      return {
        ...own(
          403,
          'PERMISSION_DENIED',
          GatewayA2aCode.PermissionDenied,
          'CREDENTIAL_UNAVAILABLE',
          `${failure.skill} needs credential(s) not available to this task: ${failure.missing.join(', ')}`,
        ),
        transport: true,
      };
    case 'quota':
      return {
        ...own(429, 'RESOURCE_EXHAUSTED', GatewayA2aCode.QuotaExceeded, 'QUOTA_EXCEEDED', failure.refusal.message),
        transport: true,
        headers: retryAfterHeader(failure.refusal),
      };
    case 'internal':
      return internal(requestId);
    case 'call':
      break;
  }
  const { error } = failure;
  switch (error.kind) {
    case 'tool_not_found':
      return spec(
        400,
        'INVALID_ARGUMENT',
        -32602,
        'INVALID_PARAMS',
        `Skill not found: ${(error as ToolNotFoundError).tool} (see the agent card)`,
      );
    case 'invalid_arguments': {
      const problems = (error as InvalidArgumentsError).problems;
      return {
        ...spec(
          400,
          'INVALID_ARGUMENT',
          -32602,
          'INVALID_PARAMS',
          error.message.replace('inputSchema', "skill's inputSchema"),
        ),
        details: [
          {
            '@type': BAD_REQUEST,
            fieldViolations: problems.map((description) => ({ field: 'arguments', description })),
          },
        ],
      };
    }
    case 'idempotency_key_reused':
      return spec(
        400,
        'INVALID_ARGUMENT',
        -32602,
        'INVALID_PARAMS',
        'this messageId was already sent with another skill or other arguments',
      );
    case 'conversation_gone':
      return spec(400, 'INVALID_ARGUMENT', -32602, 'INVALID_PARAMS', error.message);
    case 'agent_timeout':
      return own(504, 'DEADLINE_EXCEEDED', GatewayA2aCode.AgentTimeout, 'AGENT_TIMEOUT', 'Agent reply timeout');
    case 'backend_unavailable':
      return {
        ...own(
          503,
          'UNAVAILABLE',
          GatewayA2aCode.Unavailable,
          'UNAVAILABLE',
          'the agent backend is unavailable: retry later',
        ),
        transport: true,
        headers: { 'retry-after': '1' },
      };
    default:
      return internal(requestId);
  }
}

function internal(requestId: string): A2aProblem {
  return {
    status: 500,
    grpcStatus: 'INTERNAL',
    code: -32603,
    reason: 'INTERNAL_ERROR',
    domain: 'mcpgw',
    message: `Internal error (incident ${requestId})`,
    headers: {},
  };
}

function errorDetails(problem: A2aProblem): object[] {
  return [{ '@type': ERROR_INFO, reason: problem.reason, domain: problem.domain }, ...(problem.details ?? [])];
}

/** The JSON-RPC `error` member. */
export function jsonRpcError(problem: A2aProblem) {
  return { code: problem.code, message: problem.message, data: errorDetails(problem) };
}

/** The HTTP+JSON error body (`google.rpc.Status`, AIP-193), as the SDK's REST client reads it. */
export function httpJsonError(problem: A2aProblem) {
  return {
    error: {
      code: problem.status,
      status: problem.grpcStatus,
      message: problem.message,
      details: errorDetails(problem),
    },
  };
}
