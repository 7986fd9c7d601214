import { InvalidRequestError } from '@mcpgw/contracts';
import type { FastifyRequest } from 'fastify';

/**
 * The query string of a list route as fields to check, with only the `known`
 * parameters, so that a misspelt filter is refused rather than ignored (a
 * list that silently ignores `?agnet=` shows everything). A repeated parameter
 * arrives as an array, which the route's own check refuses.
 */
export function knownQuery(request: FastifyRequest, known: readonly string[]): Record<string, unknown> {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const unknown = Object.keys(query).filter((name) => !known.includes(name));
  if (unknown.length) {
    throw new InvalidRequestError(`unknown parameter(s) ${unknown.join(', ')}; known: ${known.join(', ')}`);
  }
  return { ...query };
}
