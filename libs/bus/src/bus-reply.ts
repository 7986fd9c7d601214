import { ServiceError, type BusReply } from '@mcpgw/contracts';

/**
 * The failure frame of a bus reply: a ServiceError keeps its code and message;
 * anything else is hidden behind `internal` (and reported through `unexpected`).
 */
export function failureFrame(error: unknown, unexpected: (error: unknown) => void): BusReply<never> {
  if (error instanceof ServiceError) {
    return { ok: false, error: { code: error.code, message: error.message, details: error.details } };
  }
  unexpected(error);
  return { ok: false, error: { code: 'internal', message: 'internal error' } };
}
