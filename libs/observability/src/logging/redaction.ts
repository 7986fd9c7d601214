import { redactSecrets as redactSecretShapes } from '@mcpgw/contracts';

/** What a redacted field's value becomes. */
export const REDACTED = '[redacted]';

/** Field names whose values are secrets, wherever they are (headers, credentials, tokens). */
export const SECRET_FIELDS = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-agent-api-key',
  'credentials',
  'token',
  'grant',
  'key',
  'apiKey',
  'api_key',
  'secret',
  'password',
] as const;

/**
 * pino `redact` paths for SECRET_FIELDS at the top of a log object and two
 * levels down (`headers.authorization`, `req.headers.cookie`): pino's paths
 * have no "any depth". Deeper secrets, and secrets inside strings, are caught
 * by shape (`redactLogLine`).
 */
export const REDACT_PATHS: string[] = SECRET_FIELDS.flatMap((field) => {
  const name = /^[A-Za-z_$][\w$]*$/.test(field) ? field : `["${field}"]`;
  const nested = name.startsWith('[') ? name : `.${name}`;
  return [name, `*${nested}`, `*.*${nested}`];
});

/**
 * A log line with every API key, personal access token and RuntimeGrant cut
 * down (`bak_<id>_…`, `pat_<id>_…`, `[jwt]`): the patterns are libs/contracts
 * `SECRET_PATTERNS`, next to the formats. pino runs it on each finished line.
 */
export function redactLogLine(line: string): string {
  return redactSecretShapes(line);
}
