import { CallError, InvalidArgumentsError } from '../../calls/call-errors';
import { JsonRpcCode } from '../protocol/json-rpc';
import { QUOTA_EXCEEDED_CODE } from '../../quotas/quota-refusal';

/** Surface A's own codes (docs/mcp-clients.md, "The MCP endpoint"). */
export const AgentSurfaceCode = {
  ...JsonRpcCode,
  Unauthorized: -32001,
  AgentReplyTimeout: -32003,
  /** HTTP 429 with Retry-After: over a quota (quotas/README.md). */
  QuotaExceeded: QUOTA_EXCEEDED_CODE,
} as const;

/**
 * The one place surface A turns a call-pipeline error into a JSON-RPC error.
 * It keeps the source's codes for every protocol revision: unknown tool -32601,
 * arguments failing inputSchema -32602, reply timeout -32003.
 */
export function agentSurfaceError(error: CallError): { code: number; message: string; data?: unknown } {
  switch (error.kind) {
    case 'tool_not_found':
      return { code: AgentSurfaceCode.MethodNotFound, message: error.message };
    case 'invalid_arguments':
      return {
        code: AgentSurfaceCode.InvalidParams,
        message: error.message,
        data: { errors: (error as InvalidArgumentsError).problems },
      };
    case 'idempotency_key_reused':
      return {
        code: AgentSurfaceCode.InvalidParams,
        message: error.message,
        data: { reason: 'idempotency_key_reused' },
      };
    case 'conversation_gone':
      return {
        code: AgentSurfaceCode.InvalidParams,
        message: error.message,
        data: { reason: 'conversation_expired' },
      };
    case 'agent_timeout':
      return { code: AgentSurfaceCode.AgentReplyTimeout, message: 'Agent reply timeout' };
    case 'backend_unavailable':
      return {
        code: AgentSurfaceCode.InternalError,
        message: 'Internal error: the agent backend is unavailable, retry later',
      };
    default:
      return { code: AgentSurfaceCode.InternalError, message: 'Internal error' };
  }
}
