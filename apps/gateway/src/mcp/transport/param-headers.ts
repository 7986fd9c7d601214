import type { HeaderParam } from '../../catalogue/header-params';
import { decodeHeaderValue } from '../protocol/header-value';

/** The prefix of a header that mirrors a tool parameter (2026-07-28, SEP-2243). */
export const PARAM_HEADER_PREFIX = 'mcp-param-';

/**
 * Checks each header-mapped parameter of a tools/call against its header:
 * a value in the body needs its header, and the header (decoded) must say the
 * same value (integers compared as numbers); a header without a value in the
 * body is a mismatch too. Returns the first problem, or undefined.
 */
export function paramHeaderMismatch(
  params: readonly HeaderParam[],
  args: Record<string, unknown>,
  headers: Record<string, string | string[] | undefined>,
): string | undefined {
  for (const param of params) {
    const header = `Mcp-Param-${param.name}`;
    const sent = headers[`${PARAM_HEADER_PREFIX}${param.name.toLowerCase()}`];
    if (Array.isArray(sent)) return `${header} was sent more than once`;
    const body = valueAt(args, param.path);
    const where = `arguments.${param.path.join('.')}`;
    if (sent === undefined) {
      if (body === undefined || body === null) continue;
      return `${header} is missing, but ${where} is set`;
    }
    const decoded = decodeHeaderValue(sent.trim());
    if (!decoded.ok) return `${header} ${decoded.problem}`;
    if (!matches(param.type, decoded.value, body)) return `${header} does not match ${where}`;
  }
  return undefined;
}

function matches(type: HeaderParam['type'], header: string, body: unknown): boolean {
  if (type === 'integer') {
    return typeof body === 'number' && header.trim() !== '' && Number(header) === body;
  }
  if (type === 'boolean') return typeof body === 'boolean' && header === String(body);
  return typeof body === 'string' && header === body;
}

function valueAt(args: Record<string, unknown>, path: readonly string[]): unknown {
  let value: unknown = args;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = Object.prototype.hasOwnProperty.call(value, key) ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}
