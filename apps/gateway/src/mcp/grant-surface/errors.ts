import { CallError, ToolNotFoundError } from '../../calls/call-errors';
import { JsonRpcCode } from '../protocol/json-rpc';
import { QUOTA_EXCEEDED_CODE } from '../../quotas/quota-refusal';

/** The grant surface's codes (docs/grants.md): HTTP status and JSON-RPC code travel together. */
export const GrantSurfaceError = {
  Unauthorized: { status: 401, code: -32001 },
  CredentialUnavailable: { status: 401, code: -32003 },
  TooLarge: { status: 413, code: JsonRpcCode.InvalidRequest },
  ToolNotSupported: { status: 422, code: -32002 },
  QuotaExceeded: { status: 429, code: QUOTA_EXCEEDED_CODE },
  Unclassified: { status: 500, code: -32000 },
  Unavailable: { status: 503, code: -32002 },
} as const;

export interface WireError {
  status: number;
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/**
 * The one place the grant surface turns a call-pipeline error into HTTP status
 * and JSON-RPC code. (Arguments failing the input schema never get here: they
 * are an `isError` result the model can correct.)
 */
export function grantSurfaceError(error: CallError, requestId: string): WireError {
  switch (error.kind) {
    case 'tool_not_found':
      return {
        ...GrantSurfaceError.ToolNotSupported,
        message: `tool not supported: ${(error as ToolNotFoundError).tool} (see tools/list)`,
      };
    case 'idempotency_key_reused':
      return {
        status: 400,
        code: JsonRpcCode.InvalidParams,
        message: error.message,
        data: { reason: 'idempotency_key_reused' },
      };
    case 'agent_timeout':
      return { ...GrantSurfaceError.Unavailable, message: 'the agent did not reply in time: retry later' };
    case 'backend_unavailable':
      return { ...GrantSurfaceError.Unavailable, message: 'the agent backend is unavailable: retry later' };
    default:
      return {
        ...GrantSurfaceError.Unclassified,
        message: 'unclassified gateway error',
        data: { request_id: requestId },
      };
  }
}
