import Ajv, { type ErrorObject } from 'ajv';

/**
 * Prometheus Operator objects are CRD kinds: kubernetes-models has no schema for them, so
 * the prod overlay's ServiceMonitors and PrometheusRule are held here to the part of the
 * `monitoring.coreos.com/v1` schemas that they use, field for field as the CRDs'
 * openAPIV3Schema defines it (prometheus-operator, example/prometheus-operator-crd/
 * monitoring.coreos.com_servicemonitors.yaml of v0.84 and monitoring.coreos.com_prometheusrules.yaml
 * of v0.82). A field the CRD has but this project does not use (TLS, auth, relabelings,
 * limits) is refused too: add it here, from the CRD, before a manifest uses it. Like
 * ./gateway-api.ts for the HTTPRoute.
 */

/** The operator's Duration ("30s", "1h30m", "0"). */
const DURATION = '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$';
const duration = { type: 'string', pattern: DURATION };
const stringMap = { type: 'object', additionalProperties: { type: 'string' } };
const closed = (properties: Record<string, object>, required: string[] = []) => ({
  type: 'object',
  additionalProperties: false,
  properties,
  required,
});
const metadata = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1 },
    namespace: { type: 'string' },
    labels: stringMap,
    annotations: stringMap,
  },
};

const SERVICE_MONITOR_SCHEMA = closed(
  {
    apiVersion: { const: 'monitoring.coreos.com/v1' },
    kind: { const: 'ServiceMonitor' },
    metadata,
    spec: closed(
      {
        jobLabel: { type: 'string' },
        selector: {
          type: 'object',
          additionalProperties: false,
          properties: {
            matchLabels: stringMap,
            matchExpressions: {
              type: 'array',
              items: closed(
                {
                  key: { type: 'string' },
                  operator: { type: 'string' },
                  values: { type: 'array', items: { type: 'string' } },
                },
                ['key', 'operator'],
              ),
            },
          },
        },
        namespaceSelector: closed({
          any: { type: 'boolean' },
          matchNames: { type: 'array', items: { type: 'string' } },
        }),
        endpoints: {
          type: 'array',
          items: closed({
            port: { type: 'string' },
            path: { type: 'string' },
            scheme: { enum: ['http', 'https'] },
            interval: duration,
            scrapeTimeout: duration,
            honorLabels: { type: 'boolean' },
          }),
        },
      },
      ['endpoints', 'selector'],
    ),
  },
  ['apiVersion', 'kind', 'metadata', 'spec'],
);

const PROMETHEUS_RULE_SCHEMA = closed(
  {
    apiVersion: { const: 'monitoring.coreos.com/v1' },
    kind: { const: 'PrometheusRule' },
    metadata,
    spec: closed({
      groups: {
        type: 'array',
        items: closed(
          {
            name: { type: 'string', minLength: 1 },
            interval: duration,
            rules: {
              type: 'array',
              items: closed(
                {
                  record: { type: 'string' },
                  alert: { type: 'string' },
                  expr: { anyOf: [{ type: 'integer' }, { type: 'string' }] },
                  for: duration,
                  keep_firing_for: { ...duration, minLength: 1 },
                  labels: stringMap,
                  annotations: stringMap,
                },
                ['expr'],
              ),
            },
          },
          ['name'],
        ),
      },
    }),
  },
  ['apiVersion', 'kind', 'metadata', 'spec'],
);

const ajv = new Ajv({ allErrors: true, strict: true });
const validateServiceMonitor = ajv.compile(SERVICE_MONITOR_SCHEMA);
const validatePrometheusRule = ajv.compile(PROMETHEUS_RULE_SCHEMA);

const where = (e: ErrorObject) =>
  `${e.instancePath || '/'} ${e.message}${e.keyword === 'additionalProperties' ? ` (${(e.params as { additionalProperty: string }).additionalProperty})` : ''}`;

/** The operator's Duration in milliseconds. */
function durationMs(value: string): number {
  const unit: Record<string, number> = {
    y: 31_536_000_000,
    w: 604_800_000,
    d: 86_400_000,
    h: 3_600_000,
    m: 60_000,
    s: 1_000,
    ms: 1,
  };
  let total = 0;
  for (const [, n, u] of value.matchAll(/([0-9]+)(ms|y|w|d|h|m|s)/g)) total += Number(n) * unit[u];
  return total;
}

/**
 * The problems of one ServiceMonitor: its schema, then what the operator refuses besides
 * (a scrapeTimeout above the interval). Empty: the API server and the operator admit it.
 */
export function serviceMonitorProblems(o: unknown): string[] {
  if (!validateServiceMonitor(o)) return (validateServiceMonitor.errors ?? []).map(where);
  const problems: string[] = [];
  (o as ServiceMonitor).spec.endpoints.forEach((e, i) => {
    if (e.interval && e.scrapeTimeout && durationMs(e.scrapeTimeout) > durationMs(e.interval))
      problems.push(
        `/spec/endpoints/${i}: scrapeTimeout ${e.scrapeTimeout} is greater than the interval ${e.interval}`,
      );
  });
  return problems;
}

/**
 * The problems of one PrometheusRule: its schema, the group names unique (the CRD's list
 * map keyed by name), each rule a recording rule or an alert, not both, not neither.
 */
export function prometheusRuleProblems(o: unknown): string[] {
  if (!validatePrometheusRule(o)) return (validatePrometheusRule.errors ?? []).map(where);
  const problems: string[] = [];
  const groups = (o as { spec: { groups?: { name: string; rules?: { record?: string; alert?: string }[] }[] } }).spec
    .groups;
  const seen = new Set<string>();
  (groups ?? []).forEach((g, i) => {
    if (seen.has(g.name)) problems.push(`/spec/groups/${i}: group name ${g.name} is not unique`);
    seen.add(g.name);
    (g.rules ?? []).forEach((r, j) => {
      if (!r.record === !r.alert) problems.push(`/spec/groups/${i}/rules/${j}: needs exactly one of record and alert`);
    });
  });
  return problems;
}

export interface ServiceMonitor {
  metadata: { name: string; namespace?: string };
  spec: {
    selector: { matchLabels?: Record<string, string> };
    namespaceSelector?: { any?: boolean; matchNames?: string[] };
    endpoints: { port?: string; path?: string; interval?: string; scrapeTimeout?: string }[];
  };
}
