import type { LogLevel } from '@mcpgw/contracts';
import type { AgentPrincipal } from '../../auth/principal';
import type { McpSession } from '../../sessions/sessions.service';
import type { JsonRpcResponse } from '../protocol/json-rpc';

/** Who asks, in which session (if any), and how the answer travels: what every surface A method needs. */
export interface AgentRequestContext {
  agentId: string;
  /** The HTTP request's id (X-Request-Id), for log lines about this request. */
  requestId: string;
  principal: AgentPrincipal;
  session?: McpSession;
  /** Set when the response is an event stream: notifications for this request go here. */
  notify?: (notification: object) => void;
  /** Set when that stream can be resumed: close the connection, not the stream (SSE polling). */
  release?: () => void;
  /** Aborted when the client goes away before its answer. */
  disconnected?: AbortSignal;
  /** Set for a 2026-07-28 request: no session; results carry resultType; conversations by handle. */
  stateless?: {
    logLevel?: LogLevel;
    /** `_meta["io.modelcontextprotocol/clientCapabilities"]`: what the client can do for this request. */
    clientCapabilities: Record<string, unknown>;
    /** The request's `Mcp-Param-*` headers, by lower-case name. */
    paramHeaders: Record<string, string | string[] | undefined>;
  };
}

export interface Handled {
  /** An object, or JSON text when the result must go out byte for byte; null: no response (cancelled). */
  response: JsonRpcResponse | string | null;
  /** The HTTP status, when not the surface's usual one (429: a session over its quota). */
  status?: number;
  /** HTTP headers to add, e.g. Mcp-Session-Id after initialize. */
  headers?: Record<string, string>;
  /** The method is not one this server knows (2026-07-28 answers that with HTTP 404). */
  unknownMethod?: boolean;
}

/** 2026-07-28 results say they are complete (no further input is required). */
export function complete<T extends object>(ctx: Pick<AgentRequestContext, 'stateless'>, value: T): T {
  return ctx.stateless ? { resultType: 'complete', ...value } : value;
}

/** 2026-07-28 list and read results say how long they may be cached: ours are this key's only. */
export function cacheable<T extends object>(ctx: Pick<AgentRequestContext, 'stateless'>, value: T): T {
  return ctx.stateless ? { ...value, ttlMs: 0, cacheScope: 'private' } : value;
}
