import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { QuotasService } from '../../quotas/quotas.service';
import { retryAfterHeader, type QuotaRefusal } from '../../quotas/quota-refusal';
import { batchText, classify, failure, type JsonRpcId, type JsonRpcResponse } from '../protocol/json-rpc';
import { sendRpc } from '../transport/responder';
import type { AgentRequestContext } from './agent-context';
import { AgentMcpHandler } from './agent-mcp.handler';
import { AgentSurfaceCode } from './errors';

/** A batch runs its requests at once: bound how many one body can start. */
export const MAX_BATCH_REQUESTS = 50;
/** Requests that make a round trip to the agent: what the call quotas count. */
export const AGENT_ROUND_TRIPS = new Set(['tools/call', 'resources/read', 'prompts/get']);

/**
 * 2025-03-26 JSON-RPC batches on surface A: the controller checked the body
 * (revision, size, no initialize); here each item is answered, all at once.
 */
@Injectable()
export class AgentBatches {
  constructor(
    private readonly handler: AgentMcpHandler,
    private readonly quotas: QuotasService,
  ) {}

  /**
   * Each request answered in one array; notifications only: 202. A batch's round
   * trips are admitted together or refused together. A tool result is JSON text
   * already and goes into the array as it is.
   */
  async answer(
    items: unknown[],
    ctx: AgentRequestContext,
    reply: FastifyReply,
    accept: string | undefined,
  ): Promise<void> {
    const calls = items.filter((item) => {
      const classified = classify(item);
      return classified.kind === 'request' && AGENT_ROUND_TRIPS.has(classified.message.method);
    }).length;
    const admitted = calls ? this.quotas.admitCalls(ctx.agentId, callerOf(ctx), calls) : undefined;
    if (admitted && !admitted.ok) return refuse(reply, accept, null, admitted.refusal);
    try {
      const responses = await this.responses(items, ctx);
      if (responses.length === 0) {
        void reply.status(202).send();
        return;
      }
      sendRpc(reply, accept, 200, batchText(responses));
    } finally {
      admitted?.release();
    }
  }

  private async responses(items: unknown[], ctx: AgentRequestContext): Promise<(JsonRpcResponse | string)[]> {
    const responses: (JsonRpcResponse | string)[] = [];
    await Promise.all(
      items.map(async (item) => {
        const classified = classify(item);
        if (classified.kind === 'invalid') {
          responses.push(
            failure(classified.id, AgentSurfaceCode.InvalidRequest, `Invalid Request: ${classified.reason}`),
          );
        } else if (classified.kind === 'notification') {
          this.handler.notify(classified.message, ctx);
        } else if (classified.kind === 'request') {
          const handled = await this.handler.handle(classified.message, ctx);
          if (handled.response) responses.push(handled.response);
        }
      }),
    );
    return responses;
  }
}

/** The caller the quotas count: the API key. */
export function callerOf(ctx: AgentRequestContext): string {
  return ctx.principal.callerId;
}

/** Over a quota: HTTP 429, `Retry-After`, JSON-RPC -32005 (quotas/README.md). */
export function refuse(
  reply: FastifyReply,
  accept: string | undefined,
  id: JsonRpcId | null,
  refusal: QuotaRefusal,
): void {
  sendRpc(
    reply,
    accept,
    429,
    failure(id, AgentSurfaceCode.QuotaExceeded, refusal.message, refusal.data),
    retryAfterHeader(refusal),
  );
}
