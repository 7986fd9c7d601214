/** The four limits, by the names the refusals, the metric and the CLI's JSON use. */
export const QUOTA_LIMITS = ['concurrent_calls', 'calls_per_second', 'sessions', 'streams'] as const;
export type QuotaLimitName = (typeof QUOTA_LIMITS)[number];

/** The limits that apply to one principal of an agent; 0 means no limit. */
export type QuotaLimits = Record<QuotaLimitName, number>;

/** An agent's overrides: null keeps the QUOTA_* default. */
export type QuotaOverrides = Record<QuotaLimitName, number | null>;

/** The defaults from the environment (QUOTA_*), before any agent's overrides. */
export function defaultLimits(env: {
  QUOTA_CONCURRENT_CALLS: number;
  QUOTA_CALLS_PER_SECOND: number;
  QUOTA_SESSIONS: number;
  QUOTA_STREAMS: number;
}): QuotaLimits {
  return {
    concurrent_calls: env.QUOTA_CONCURRENT_CALLS,
    calls_per_second: env.QUOTA_CALLS_PER_SECOND,
    sessions: env.QUOTA_SESSIONS,
    streams: env.QUOTA_STREAMS,
  };
}

/** The defaults with an agent's overrides laid over them. */
export function effectiveLimits(defaults: QuotaLimits, overrides: QuotaOverrides | undefined): QuotaLimits {
  if (!overrides) return defaults;
  const limits = { ...defaults };
  for (const name of QUOTA_LIMITS) limits[name] = overrides[name] ?? defaults[name];
  return limits;
}
