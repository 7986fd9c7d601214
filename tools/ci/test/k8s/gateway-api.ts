import Ajv, { type ErrorObject } from 'ajv';

/**
 * Gateway API objects are CRD kinds: kubernetes-models has no schema for them, so the
 * manifests' HTTPRoutes are held here to the part of the `gateway.networking.k8s.io/v1`
 * HTTPRoute schema (standard channel, v1.2 and later: `rules[].timeouts`) that they use,
 * field for field as the CRD's openAPIV3Schema and its CEL rules define it. A field the
 * CRD has but this project does not use (filters, headers, query params, rule names) is
 * refused too: add it here, from the CRD, before a manifest uses it.
 */

/** GEP-2257 Duration: 1-4 parts of up to 5 digits, each with h, m, s or ms ("660s", "1h30m", "0s"). */
const DURATION = '^([0-9]{1,5}(h|m|s|ms)){1,4}$';
const DNS_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const port = { type: 'integer', minimum: 1, maximum: 65535 };
const closed = (properties: Record<string, object>, required: string[] = []) => ({
  type: 'object',
  additionalProperties: false,
  properties,
  required,
});

const HTTP_ROUTE_SCHEMA = closed(
  {
    apiVersion: { const: 'gateway.networking.k8s.io/v1' },
    kind: { const: 'HTTPRoute' },
    metadata: {
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string', minLength: 1 }, namespace: { type: 'string' } },
    },
    spec: closed(
      {
        parentRefs: {
          type: 'array',
          minItems: 1, // optional in the CRD; a route with no parent serves nothing
          maxItems: 32,
          items: closed(
            {
              group: { type: 'string', maxLength: 253, pattern: `^$|${DNS_SUBDOMAIN}` },
              kind: { type: 'string', minLength: 1, maxLength: 63, pattern: '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$' },
              name: { type: 'string', minLength: 1, maxLength: 253 },
              namespace: { type: 'string', minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' },
              sectionName: { type: 'string', minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN },
              port,
            },
            ['name'],
          ),
        },
        hostnames: {
          type: 'array',
          maxItems: 16,
          items: {
            type: 'string',
            minLength: 1,
            maxLength: 253,
            pattern: '^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
          },
        },
        rules: {
          type: 'array',
          minItems: 1,
          maxItems: 16,
          items: closed({
            matches: {
              type: 'array',
              maxItems: 64,
              items: closed({
                path: closed({
                  type: { enum: ['Exact', 'PathPrefix', 'RegularExpression'] },
                  value: { type: 'string', maxLength: 1024 },
                }),
                method: { enum: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'] },
              }),
            },
            backendRefs: {
              type: 'array',
              maxItems: 16,
              items: closed(
                {
                  group: { type: 'string', maxLength: 253, pattern: `^$|${DNS_SUBDOMAIN}` },
                  kind: { type: 'string', minLength: 1, maxLength: 63 },
                  name: { type: 'string', minLength: 1, maxLength: 253 },
                  namespace: { type: 'string', minLength: 1, maxLength: 63 },
                  port,
                  weight: { type: 'integer', minimum: 0, maximum: 1000000 },
                },
                ['name'],
              ),
            },
            timeouts: closed({
              request: { type: 'string', pattern: DURATION },
              backendRequest: { type: 'string', pattern: DURATION },
            }),
          }),
        },
      },
      ['parentRefs', 'rules'],
    ),
  },
  ['apiVersion', 'kind', 'metadata', 'spec'],
);

const validate = new Ajv({ allErrors: true, strict: true }).compile(HTTP_ROUTE_SCHEMA);

const where = (e: ErrorObject) =>
  `${e.instancePath || '/'} ${e.message}${e.keyword === 'additionalProperties' ? ` (${(e.params as { additionalProperty: string }).additionalProperty})` : ''}`;

/** A GEP-2257 duration in milliseconds ("0s" is 0: no timeout); NaN for anything else. */
export function durationMs(value: string): number {
  if (!new RegExp(DURATION).test(value)) return NaN;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };
  let total = 0;
  for (const [, n, u] of value.matchAll(/([0-9]+)(ms|h|m|s)/g)) total += Number(n) * unit[u];
  return total;
}

/** Characters the CRD allows in an Exact or PathPrefix value. */
const PATH_CHARS = /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|%[0-9a-fA-F]{2})+$/;

/**
 * The problems of one HTTPRoute: its schema, then the CRD's CEL rules that concern the
 * fields above (path values, a Service backend's port, backendRequest within request,
 * fewer than 128 matches in all). Empty: the API server would admit it.
 */
export function httpRouteProblems(o: unknown): string[] {
  if (!validate(o)) return (validate.errors ?? []).map(where);
  const route = o as { spec: { rules: Rule[] } };
  const problems: string[] = [];
  let matches = 0;
  route.spec.rules.forEach((rule, i) => {
    const at = `/spec/rules/${i}`;
    for (const m of rule.matches ?? []) {
      matches++;
      const { type = 'PathPrefix', value = '/' } = m.path ?? {};
      if (type === 'RegularExpression') continue;
      if (!value.startsWith('/')) problems.push(`${at}: path ${value} must be absolute`);
      if (!PATH_CHARS.test(value) || /\/\/|\/\.\.?\/|%2f|#/i.test(value) || /\/\.\.?$/.test(value))
        problems.push(`${at}: path ${value} has characters or segments the CRD refuses`);
    }
    for (const b of rule.backendRefs ?? [])
      if ((b.group ?? '') === '' && (b.kind ?? 'Service') === 'Service' && b.port === undefined)
        problems.push(`${at}: backendRef ${b.name} to a Service needs a port`);
    const { request, backendRequest } = rule.timeouts ?? {};
    if (request && backendRequest && durationMs(request) !== 0 && durationMs(backendRequest) > durationMs(request))
      problems.push(`${at}: backendRequest timeout cannot be longer than request timeout`);
  });
  if (matches >= 128) problems.push(`${matches} matches in all: fewer than 128`);
  return problems;
}

export interface Match {
  path?: { type?: 'Exact' | 'PathPrefix' | 'RegularExpression'; value?: string };
  method?: string;
}
export interface Rule {
  matches?: Match[];
  backendRefs?: { group?: string; kind?: string; name: string; namespace?: string; port?: number }[];
  timeouts?: { request?: string; backendRequest?: string };
}
