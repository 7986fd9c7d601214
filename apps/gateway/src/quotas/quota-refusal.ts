import type { QuotaLimitName } from './quota-limits';

/**
 * The JSON-RPC code of every quota refusal, on both surfaces (HTTP 429):
 * -32005 "Limit exceeded", the server-error code EIP-1474 gives to requests
 * over a defined limit, unused by MCP and by either surface's table.
 */
export const QUOTA_EXCEEDED_CODE = -32005;

/** What `Retry-After` says, per limit: a call slot or a rate slot frees soon; a stream or a session later. */
export const RETRY_AFTER_SECONDS: Record<QuotaLimitName, number> = {
  concurrent_calls: 1,
  calls_per_second: 1,
  streams: 5,
  sessions: 60,
};

const WHAT: Record<QuotaLimitName, string> = {
  concurrent_calls: 'calls in flight',
  calls_per_second: 'calls per second',
  sessions: 'open sessions',
  streams: 'open GET streams',
};

/** A request over a limit: what the surfaces write (HTTP 429, `Retry-After`, JSON-RPC -32005). */
export interface QuotaRefusal {
  limit: QuotaLimitName;
  max: number;
  retryAfterSeconds: number;
  message: string;
  /** `error.data` of the JSON-RPC error. */
  data: { limit: QuotaLimitName; max: number; retry_after_seconds: number };
}

export function quotaRefusal(limit: QuotaLimitName, max: number, callerId: string): QuotaRefusal {
  const retryAfterSeconds = RETRY_AFTER_SECONDS[limit];
  const per = callerId.startsWith('task:') ? 'task' : 'API key';
  return {
    limit,
    max,
    retryAfterSeconds,
    message: `Too many requests: at most ${max} ${WHAT[limit]} per ${per}; retry after ${retryAfterSeconds} s`,
    data: { limit, max, retry_after_seconds: retryAfterSeconds },
  };
}

/** The headers of a refusal. */
export function retryAfterHeader(refusal: QuotaRefusal): Record<string, string> {
  return { 'retry-after': String(refusal.retryAfterSeconds) };
}
