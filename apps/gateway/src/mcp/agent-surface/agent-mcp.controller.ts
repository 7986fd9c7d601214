import { Controller, UseGuards, Delete, Get, Inject, Logger, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AgentAuthenticator, type AgentAuthResult } from '../../auth/agent-authenticator.service';
import { SessionsService, type McpSession } from '../../sessions/sessions.service';
import { classify, failure, type JsonRpcId, type JsonRpcRequest } from '../protocol/json-rpc';
import { StatelessCode, isStatelessRequest } from '../protocol/stateless';
import { TASKS_EXTENSION, TaskService, declaresTasks } from '../../tasks/tasks.service';
import { DEFAULT_PROTOCOL_VERSION, isSupportedVersion, primesStreams, allowsBatches } from '../protocol/versions';
import { SESSION_HEADER, acceptsNeither, acceptsSse, sendRpc } from '../transport/responder';
import { OriginGuard } from '../transport/origin.guard';
import { PARAM_HEADER_PREFIX } from '../transport/param-headers';
import { SseStream } from '../transport/sse-stream';
import type { AgentRequestContext } from './agent-context';
import { AgentMcpHandler } from './agent-mcp.handler';
import { AGENT_ROUND_TRIPS, AgentBatches, MAX_BATCH_REQUESTS, callerOf, refuse } from './agent-batches';
import { wantsStream } from './agent-tools';
import { AgentSurfaceCode } from './errors';
import { ListChangedStreams } from './list-changed.streams';
import { ListenStreams } from '../subscriptions/listen-streams';
import { honouredFilter } from '../subscriptions/subscription-filter';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';
import { SessionStreams } from './session-streams';
import { whenClientLeaves } from '../../cancellation/client-disconnect';
import { STATELESS_STREAM, routeStateless, statelessStatus } from './stateless-requests';
import { QuotasService } from '../../quotas/quotas.service';
import { jsonDeeperThan, TOO_DEEP_MESSAGE } from '../transport/json-depth';

const VERSION_HEADER = 'mcp-protocol-version';

/**
 * Surface A: `/{agent_id}/mcp`, MCP Streamable HTTP with an agent API key
 * (or, with OAuth on, an access token for the agent's resource: ../../oauth/).
 * Each request is a line of guards (accept, content type, key, body, version,
 * session), then one dispatch. Every request is authenticated anew; a session
 * id is never a credential.
 */
@Controller(':agentId/mcp')
@UseGuards(OriginGuard)
export class AgentMcpController {
  private readonly logger = new Logger(AgentMcpController.name);

  constructor(
    private readonly auth: AgentAuthenticator,
    private readonly sessions: SessionsService,
    private readonly handler: AgentMcpHandler,
    private readonly listChanged: ListChangedStreams,
    private readonly listens: ListenStreams,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
    private readonly quotas: QuotasService,
    private readonly sessionStreams: SessionStreams,
    private readonly tasks: TaskService,
    private readonly batches: AgentBatches,
  ) {}

  @Post()
  async post(@Param('agentId') agentId: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const accept = req.headers.accept;
    const send = (status: number, id: JsonRpcId | null, code: number, message: string) =>
      sendRpc(reply, accept, status, failure(id, code, message));
    try {
      if (acceptsNeither(accept)) {
        return send(
          406,
          null,
          AgentSurfaceCode.InvalidRequest,
          'Accept must allow application/json or text/event-stream',
        );
      }
      if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
        return send(415, null, AgentSurfaceCode.InvalidRequest, 'Content-Type must be application/json');
      }
      const principal = await this.auth.authenticate(agentId, req.headers, req.ip);
      if (!principal.ok) return refuseCaller(reply, accept, principal);

      let body: unknown;
      try {
        body = JSON.parse(String(req.body ?? ''));
      } catch {
        return send(400, null, AgentSurfaceCode.ParseError, 'Parse error: the body is not valid JSON');
      }
      if (jsonDeeperThan(String(req.body))) {
        return send(400, null, AgentSurfaceCode.InvalidRequest, `Invalid Request: ${TOO_DEEP_MESSAGE}`);
      }
      const version = header(req, VERSION_HEADER);
      if (!Array.isArray(body) && isStatelessRequest(body, version)) {
        return this.stateless(body, req, reply, { agentId, requestId: req.id, principal: principal.principal });
      }
      if (version !== undefined && !isSupportedVersion(version)) {
        return send(400, null, AgentSurfaceCode.InvalidRequest, `Unsupported MCP-Protocol-Version: ${version}`);
      }

      const messages = Array.isArray(body) ? body : [body];
      const isInitialize = messages.some((m) => (m as { method?: unknown } | null)?.method === 'initialize');
      let session: McpSession | undefined;
      const sessionId = header(req, SESSION_HEADER);
      if (sessionId !== undefined && !isInitialize) {
        const found = await this.sessions.resume(sessionId, agentId, principal.principal.id);
        if (!found.ok) return send(404, null, AgentSurfaceCode.InvalidRequest, `Session not found: ${found.reason}`);
        session = found.session;
      }
      const ctx: AgentRequestContext = { agentId, requestId: req.id, principal: principal.principal, session };

      if (Array.isArray(body)) {
        const effective = version ?? session?.protocolVersion ?? DEFAULT_PROTOCOL_VERSION;
        if (!allowsBatches(effective) || body.length === 0 || body.length > MAX_BATCH_REQUESTS || isInitialize) {
          return send(
            400,
            null,
            AgentSurfaceCode.InvalidRequest,
            `JSON-RPC batches are not accepted here (protocol ${effective})`,
          );
        }
        return this.batches.answer(body, ctx, reply, accept);
      }

      const classified = classify(body);
      if (classified.kind === 'invalid') {
        return send(400, classified.id, AgentSurfaceCode.InvalidRequest, `Invalid Request: ${classified.reason}`);
      }
      if (classified.kind === 'notification') this.handler.notify(classified.message, ctx);
      if (classified.kind === 'response') this.handler.relayClientResponse(classified.message, ctx);
      if (classified.kind !== 'request') {
        void reply.status(202).send();
        return;
      }

      await this.respond(classified.message, ctx, req, reply, {
        priming: primesStreams(session?.protocolVersion ?? version),
        eventIds: true,
      });
    } catch (error) {
      const incident = req.id; // the request id: in X-Request-Id and on this line as request_id
      this.logger.error({
        msg: 'unhandled error on surface A',
        request_id: incident,
        agent_id: agentId,
        error: (error as Error).message,
      });
      if (!reply.sent) send(500, null, AgentSurfaceCode.InternalError, `Internal error (incident ${incident})`);
    }
  }

  /**
   * One request, within its key's call quotas when it goes to the agent: the
   * call holds its slot until it is answered, times out, fails or is cancelled.
   */
  private async respond(
    request: JsonRpcRequest,
    ctx: AgentRequestContext,
    req: FastifyRequest,
    reply: FastifyReply,
    stream: { priming: boolean; eventIds: boolean },
  ): Promise<void> {
    const admitted = AGENT_ROUND_TRIPS.has(request.method)
      ? this.quotas.admitCalls(ctx.agentId, callerOf(ctx))
      : undefined;
    if (admitted && !admitted.ok) return refuse(reply, req.headers.accept, request.id, admitted.refusal);
    try {
      await this.answer(request, ctx, req, reply, stream);
    } finally {
      admitted?.release();
    }
  }

  /**
   * One request, answered as JSON, or as an event stream when it streams
   * notifications. A stateless request is cancelled by closing it.
   */
  private async answer(
    request: JsonRpcRequest,
    ctx: AgentRequestContext,
    req: FastifyRequest,
    reply: FastifyReply,
    { priming, eventIds }: { priming: boolean; eventIds: boolean },
  ): Promise<void> {
    const accept = req.headers.accept;
    const disconnected = ctx.stateless ? whenClientLeaves(reply) : undefined;
    const refused = await this.handler.refusal(request, ctx);
    if (refused?.response) return sendRpc(reply, accept, refused.status ?? 400, refused.response, refused.headers);
    if (acceptsSse(accept) && wantsStream(request, ctx)) {
      const stream = new SseStream(reply, this.sessionStreams.ids(ctx.session, eventIds, priming, 'request'));
      stream.open({}, priming);
      try {
        const handled = await this.handler.handle(request, {
          ...ctx,
          disconnected,
          notify: (n) => stream.send(n),
          ...(stream.resumable ? { release: () => stream.release() } : {}),
        });
        if (handled.response) stream.send(handled.response);
      } catch (error) {
        this.logger.error({
          msg: 'error in a streamed request',
          request_id: ctx.requestId,
          agent_id: ctx.agentId,
          error: (error as Error).message,
        });
        stream.send(failure(request.id, AgentSurfaceCode.InternalError, 'Internal error'));
      } finally {
        stream.end();
      }
      return;
    }
    const handled = await this.handler.handle(request, { ...ctx, disconnected });
    if (handled.response === null) {
      void reply.status(204).send();
      return;
    }
    const status = handled.status ?? (ctx.stateless ? statelessStatus(handled) : 200);
    sendRpc(reply, accept, status, handled.response, handled.headers);
  }

  /** 2026-07-28 (rules in `stateless-requests.ts`): write what the route says, or serve the request. */
  private async stateless(
    body: unknown,
    req: FastifyRequest,
    reply: FastifyReply,
    ctx: AgentRequestContext,
  ): Promise<void> {
    const route = routeStateless(body, {
      version: header(req, VERSION_HEADER),
      method: header(req, 'mcp-method'),
      name: header(req, 'mcp-name'),
      params: paramHeaders(req),
    });
    if (route.kind === 'answer') return sendRpc(reply, req.headers.accept, route.status, route.response);
    if (route.kind === 'request' && route.request.method === 'subscriptions/listen')
      return this.listen(route.request, { ...ctx, stateless: route.stateless }, req, reply);
    if (route.kind === 'request')
      return this.respond(route.request, { ...ctx, stateless: route.stateless }, req, reply, STATELESS_STREAM);
    if (route.kind === 'notification') this.handler.notify(route.message, ctx);
    void reply.status(202).send();
  }

  /**
   * `subscriptions/listen` (2026-07-28): a stream of the agent's list changes
   * and resource updates, as the filter asks (`../subscriptions/`). It holds a
   * stream slot of the key's quota until it closes.
   */
  private async listen(
    request: JsonRpcRequest,
    ctx: AgentRequestContext,
    req: FastifyRequest,
    reply: FastifyReply,
  ): Promise<void> {
    const accept = req.headers.accept;
    const honoured = honouredFilter(request.params?.notifications, this.env.RESOURCE_URI_MAX_CHARS);
    if (!honoured.ok)
      return sendRpc(reply, accept, 200, failure(request.id, AgentSurfaceCode.InvalidParams, honoured.message));
    if (!acceptsSse(accept)) {
      return sendRpc(
        reply,
        accept,
        406,
        failure(request.id, AgentSurfaceCode.InvalidRequest, 'subscriptions/listen needs Accept: text/event-stream'),
      );
    }
    const taskIds = honoured.filter.taskIds;
    if (taskIds) {
      // notifications/tasks: for a client that declared the extension, on the key's own tasks only.
      if (!declaresTasks(ctx.stateless?.clientCapabilities))
        return sendRpc(
          reply,
          accept,
          200,
          failure(request.id, StatelessCode.MissingRequiredClientCapability, 'Missing required client capability', {
            requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
          }),
        );
      const owned = await this.tasks.owned(taskIds, ctx.agentId, ctx.principal.callerId);
      if (owned.length) honoured.filter.taskIds = owned;
      else delete honoured.filter.taskIds;
    }
    const admitted = this.quotas.admitStream(ctx.agentId, callerOf(ctx));
    if (!admitted.ok) return refuse(reply, accept, request.id, admitted.refusal);
    reply.raw.once('close', admitted.release);
    if (req.raw.destroyed || reply.raw.destroyed) admitted.release();
    this.listens.open(ctx.agentId, request.id, honoured.filter, new SseStream(reply));
  }

  /** A server-to-client stream for the session: notifications/tools/list_changed. */
  @Get()
  async get(@Param('agentId') agentId: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const principal = await this.auth.authenticate(agentId, req.headers, req.ip);
    if (!principal.ok) return refuseCaller(reply, undefined, principal);
    const sessionId = header(req, SESSION_HEADER);
    if (!acceptsSse(req.headers.accept) || !sessionId) {
      // No stream to offer without a session (and none at all in 2026-07-28).
      void reply.status(405).header('allow', 'POST, DELETE').send();
      return;
    }
    const found = await this.sessions.resume(sessionId, agentId, principal.principal.id);
    if (!found.ok)
      return sendRpc(reply, undefined, 404, failure(null, AgentSurfaceCode.InvalidRequest, 'Session not found'));
    const admitted = this.quotas.admitStream(agentId, principal.principal.callerId);
    if (!admitted.ok) return refuse(reply, undefined, null, admitted.refusal);
    // The slot is held until the stream closes, whoever closes it (client, drain, network).
    reply.raw.once('close', admitted.release);
    if (req.raw.destroyed || reply.raw.destroyed) admitted.release();
    const lastEventId = header(req, 'last-event-id');
    if (lastEventId !== undefined)
      return this.sessionStreams.resume(found.session, lastEventId, reply, admitted.release);
    const priming = primesStreams(found.session.protocolVersion);
    const ids = this.sessionStreams.ids(found.session, true, priming, 'listen');
    this.listChanged.open(agentId, new SseStream(reply, ids), priming, found.session);
  }

  @Delete()
  async delete(
    @Param('agentId') agentId: string,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const principal = await this.auth.authenticate(agentId, req.headers, req.ip);
    if (!principal.ok) return refuseCaller(reply, undefined, principal);
    const sessionId = header(req, SESSION_HEADER);
    if (!sessionId) {
      return sendRpc(
        reply,
        undefined,
        400,
        failure(null, AgentSurfaceCode.InvalidRequest, 'Mcp-Session-Id header required'),
      );
    }
    const ended = await this.sessions.end(sessionId, agentId, principal.principal.id);
    if (!ended)
      return sendRpc(reply, undefined, 404, failure(null, AgentSurfaceCode.InvalidRequest, 'Session not found'));
    void reply.status(204).send();
  }
}

/** A caller not let in: 401 (403 for a token short of scopes), with the OAuth challenge when OAuth is on. */
function refuseCaller(
  reply: FastifyReply,
  accept: string | undefined,
  refusal: Extract<AgentAuthResult, { ok: false }>,
): void {
  if (refusal.challenge) void reply.header('www-authenticate', refusal.challenge);
  const message =
    refusal.status === 403
      ? `Forbidden: ${refusal.reason}`
      : refusal.status === 429
        ? `Too many requests: ${refusal.reason}`
        : `Unauthorized: ${refusal.reason}`;
  sendRpc(reply, accept, refusal.status, failure(null, AgentSurfaceCode.Unauthorized, message));
}

/** The request's `Mcp-Param-*` headers (2026-07-28), by lower-case name. */
function paramHeaders(req: FastifyRequest): Record<string, string | string[] | undefined> {
  return Object.fromEntries(Object.entries(req.headers).filter(([name]) => name.startsWith(PARAM_HEADER_PREFIX)));
}

function header(req: FastifyRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
