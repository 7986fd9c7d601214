import {
  classify,
  failure,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../protocol/json-rpc';
import { checkStatelessRequest } from '../protocol/stateless';
import type { AgentRequestContext, Handled } from './agent-context';
import { AgentSurfaceCode } from './errors';

/** The headers a 2026-07-28 request must agree with its body on. */
export interface StatelessHeaders {
  version?: string;
  method?: string;
  name?: string;
  /** The `Mcp-Param-*` headers, by lower-case name (checked against the tool's `x-mcp-header` parameters). */
  params?: Record<string, string | string[] | undefined>;
}

/**
 * What to do with a stateless request: answer at once (an error), take a
 * notification (202), or serve a request with the stateless context.
 */
export type StatelessRoute =
  | { kind: 'answer'; status: number; response: JsonRpcResponse }
  | { kind: 'notification'; message: JsonRpcNotification }
  | { kind: 'accepted' }
  | { kind: 'request'; request: JsonRpcRequest; stateless: NonNullable<AgentRequestContext['stateless']> };

/**
 * How a stateless request is served on a streamed answer: 2026-07-28 streams
 * do not resume, so no priming event and no event ids.
 */
export const STATELESS_STREAM = { priming: false, eventIds: false } as const;

/**
 * 2026-07-28: no handshake, no session; every request carries what it needs in
 * `_meta`, and its headers must agree with it (`protocol/stateless.ts`). This
 * keeps those rules out of the HTTP controller, which only writes the answer.
 */
export function routeStateless(body: unknown, headers: StatelessHeaders): StatelessRoute {
  const classified = classify(body);
  if (classified.kind === 'invalid') {
    return {
      kind: 'answer',
      status: 400,
      response: failure(classified.id, AgentSurfaceCode.InvalidRequest, `Invalid Request: ${classified.reason}`),
    };
  }
  if (classified.kind === 'notification') return { kind: 'notification', message: classified.message };
  if (classified.kind === 'response') return { kind: 'accepted' };
  const check = checkStatelessRequest(classified.message, headers);
  if (!check.ok)
    return { kind: 'answer', status: check.status, response: failure(check.id, check.code, check.message, check.data) };
  return {
    kind: 'request',
    request: classified.message,
    stateless: {
      logLevel: check.logLevel,
      clientCapabilities: check.clientCapabilities,
      paramHeaders: headers.params ?? {},
    },
  };
}

/** 2026-07-28 answers an unknown method with HTTP 404; every other answer is a 200. */
export function statelessStatus(handled: Handled): number {
  return handled.unknownMethod ? 404 : 200;
}
