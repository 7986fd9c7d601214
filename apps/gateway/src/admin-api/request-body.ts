import { InvalidRequestError } from '@mcpgw/contracts';
import { isText } from '@mcpgw/runtime';

/**
 * A JSON object body with only the `known` fields (an absent body is `{}`), so
 * that a misspelt field is refused, not ignored.
 */
export function objectBody(body: unknown, known: readonly string[]): Record<string, unknown> {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new InvalidRequestError('the body must be a JSON object');
  const unknown = Object.keys(body).filter((name) => !known.includes(name));
  if (unknown.length) {
    throw new InvalidRequestError(`unknown field(s) ${unknown.join(', ')}; known: ${known.join(', ') || 'none'}`);
  }
  return body as Record<string, unknown>;
}

/** An optional string field of at most `max` characters, without control characters. */
export function optionalString(body: Record<string, unknown>, name: string, max: number): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !isText(value, max)) {
    throw new InvalidRequestError(`${name}: a string of at most ${max} characters, no control characters`);
  }
  return value;
}
