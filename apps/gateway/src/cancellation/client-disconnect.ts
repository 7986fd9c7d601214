import type { FastifyReply } from 'fastify';

/**
 * Closing the request cancels it in 2026-07-28 (earlier revisions say a
 * disconnect is not a cancel): aborts when the client leaves before its answer.
 */
export function whenClientLeaves(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}
