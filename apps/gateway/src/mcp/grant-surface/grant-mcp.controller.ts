import { Controller, UseGuards, Logger, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RuntimeGrantAuthenticator } from '../../grants/runtime-grant-authenticator.service';
import { REPLAYED_HEADER, markReplay } from '../../idempotency/replay';
import { JsonRpcCode, failure, rawResult, result, type JsonRpcId } from '../protocol/json-rpc';
import { STATELESS_PROTOCOL_VERSION } from '../protocol/versions';
import { OriginGuard } from '../transport/origin.guard';
import { PARAM_HEADER_PREFIX } from '../transport/param-headers';
import { GrantSurfaceError } from './errors';
import { GrantMcpHandler, taskCaller } from './grant-mcp.handler';
import { QuotasService } from '../../quotas/quotas.service';
import { retryAfterHeader } from '../../quotas/quota-refusal';
import { parseGrantRequest } from './grant-request';
import { jsonDeeperThan, TOO_DEEP_MESSAGE } from '../transport/json-depth';

/**
 * Surface B: `/workspaces/{ws}/agents/{agent}/mcp/http`, a task-scoped
 * RuntimeGrant per request, the contract in docs/grants.md to the letter. Guards in
 * order: configured, parseable, authorised, well-formed; then one dispatch.
 * (The body size limit is enforced while the body streams in: see main.ts.)
 */
@Controller('workspaces/:workspaceId/agents/:agentId/mcp/http')
@UseGuards(OriginGuard)
export class GrantMcpController {
  private readonly logger = new Logger(GrantMcpController.name);

  constructor(
    private readonly auth: RuntimeGrantAuthenticator,
    private readonly handler: GrantMcpHandler,
    private readonly quotas: QuotasService,
  ) {}

  @Post()
  async post(
    @Param('workspaceId') workspaceId: string,
    @Param('agentId') agentId: string,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    // The caller's X-Request-Id or a new one, already in the answer's headers and on every log line (libs/runtime request-ids.ts).
    const requestId = req.id;
    const send = (status: number, body: unknown) =>
      void reply
        .status(status)
        .header('content-type', 'application/json')
        .send(typeof body === 'string' ? body : JSON.stringify(body));
    const fail = (status: number, id: JsonRpcId | null, code: number, message: string, data?: unknown) =>
      send(status, failure(id, code, message, data));
    let id: JsonRpcId | null = null;
    try {
      if (!this.auth.configured) {
        return fail(
          503,
          null,
          GrantSurfaceError.Unavailable.code,
          'this gateway is not configured for RuntimeGrants: retry later',
        );
      }
      let body: unknown;
      try {
        body = JSON.parse(String(req.body ?? ''));
      } catch {
        return fail(400, null, JsonRpcCode.ParseError, 'parse error: the body is not valid JSON');
      }
      if (jsonDeeperThan(String(req.body))) return fail(400, null, JsonRpcCode.InvalidRequest, TOO_DEEP_MESSAGE);
      id = echoableId(body);
      const auth = await this.auth.authenticate(req.raw.rawHeaders, workspaceId, agentId);
      if (!auth.ok) return fail(401, id, GrantSurfaceError.Unauthorized.code, `unauthorized: ${auth.reason}`);

      const parsed = parseGrantRequest(body);
      if (!parsed.ok) return fail(400, parsed.id, parsed.code, parsed.message);
      const request = parsed.request;

      if (request.method === 'tools/list')
        return send(200, result(request.id as JsonRpcId, await this.handler.listTools(auth.grant)));

      // The task's call quotas; the slot is held until the call ends, however it ends.
      const admitted = this.quotas.admitCalls(agentId, taskCaller(auth.grant));
      if (!admitted.ok) {
        const { refusal } = admitted;
        reply.headers(retryAfterHeader(refusal));
        return fail(
          GrantSurfaceError.QuotaExceeded.status,
          request.id,
          GrantSurfaceError.QuotaExceeded.code,
          refusal.message,
          refusal.data,
        );
      }
      const called = await this.handler
        .callTool(request, auth.grant, requestId, mirroredParams(req))
        .finally(admitted.release);
      if (!called.ok) return fail(called.status, request.id, called.code, called.message, called.data);
      if (called.replayed) reply.header(REPLAYED_HEADER, 'true');
      send(
        200,
        rawResult(request.id as JsonRpcId, called.replayed ? markReplay(called.resultText) : called.resultText),
      );
    } catch (error) {
      this.logger.error({
        msg: 'unclassified error on the grant surface',
        request_id: requestId,
        error: (error as Error).message,
      });
      if (!reply.sent) {
        fail(500, id, GrantSurfaceError.Unclassified.code, 'unclassified gateway error', { request_id: requestId });
      }
    }
  }
}

/**
 * The `Mcp-Param-*` headers when the client mirrors parameters into headers
 * (it speaks 2026-07-28, or sends any): then they are checked; else undefined.
 */
function mirroredParams(req: FastifyRequest): Record<string, string | string[] | undefined> | undefined {
  const params = Object.entries(req.headers).filter(([name]) => name.startsWith(PARAM_HEADER_PREFIX));
  const mirrors = params.length > 0 || req.headers['mcp-protocol-version'] === STATELESS_PROTOCOL_VERSION;
  return mirrors ? Object.fromEntries(params) : undefined;
}

/** The request id to echo: a string or number id of an object body, else null. */
function echoableId(body: unknown): JsonRpcId | null {
  const id = (body as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}
