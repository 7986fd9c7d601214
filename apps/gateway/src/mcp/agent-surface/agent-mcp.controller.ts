import { Controller, Delete, Get, Logger, Param, Post, Req, Res } from '@nestjs/common';
import { AGENT_ID_PATTERN } from '@mcpgw/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { ApiKeyAuthenticator } from '../../auth/api-key-authenticator.service';
import { SessionsService, type McpSession } from '../../sessions/sessions.service';
import { classify, failure, type JsonRpcId } from '../protocol/json-rpc';
import { isSupportedVersion } from '../protocol/versions';
import { SESSION_HEADER, acceptsNeither, sendRpc } from '../transport/responder';
import { AgentMcpHandler } from './agent-mcp.handler';
import { AgentSurfaceCode } from './errors';

const API_KEY_HEADER = 'x-agent-api-key';
const VERSION_HEADER = 'mcp-protocol-version';

/**
 * Surface A: `/{agent_id}/mcp`, MCP Streamable HTTP with an agent API key.
 * Each request is a line of guards (accept, content type, key, body, version,
 * session), then one dispatch. Every request is authenticated anew; a session
 * id is never a credential.
 */
@Controller(':agentId/mcp')
export class AgentMcpController {
  private readonly logger = new Logger(AgentMcpController.name);

  constructor(
    private readonly auth: ApiKeyAuthenticator,
    private readonly sessions: SessionsService,
    private readonly handler: AgentMcpHandler,
  ) {}

  @Post()
  async post(@Param('agentId') agentId: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const accept = req.headers.accept;
    const send = (status: number, id: JsonRpcId | null, code: number, message: string) =>
      sendRpc(reply, accept, status, failure(id, code, message));
    try {
      if (acceptsNeither(accept)) {
        return send(406, null, AgentSurfaceCode.InvalidRequest, 'Accept must allow application/json or text/event-stream');
      }
      if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
        return send(415, null, AgentSurfaceCode.InvalidRequest, 'Content-Type must be application/json');
      }
      const principal = await this.authenticate(agentId, req);
      if (!principal.ok) return send(401, null, AgentSurfaceCode.Unauthorized, `Unauthorized: ${principal.reason}`);

      let body: unknown;
      try {
        body = JSON.parse(String(req.body ?? ''));
      } catch {
        return send(400, null, AgentSurfaceCode.ParseError, 'Parse error: the body is not valid JSON');
      }
      if (Array.isArray(body)) {
        return send(400, null, AgentSurfaceCode.InvalidRequest, 'JSON-RPC batches are not supported by this endpoint');
      }
      const version = header(req, VERSION_HEADER);
      if (version !== undefined && !isSupportedVersion(version)) {
        return send(400, null, AgentSurfaceCode.InvalidRequest, `Unsupported MCP-Protocol-Version: ${version}`);
      }
      const classified = classify(body);
      if (classified.kind === 'invalid') {
        return send(400, classified.id, AgentSurfaceCode.InvalidRequest, `Invalid Request: ${classified.reason}`);
      }

      const isInitialize = classified.kind === 'request' && classified.message.method === 'initialize';
      let session: McpSession | undefined;
      const sessionId = header(req, SESSION_HEADER);
      if (sessionId !== undefined && !isInitialize) {
        const found = await this.sessions.resume(sessionId, agentId, principal.principal.id);
        if (!found.ok) return send(404, null, AgentSurfaceCode.InvalidRequest, `Session not found: ${found.reason}`);
        session = found.session;
      }
      if (classified.kind !== 'request') {
        void reply.status(202).send();
        return;
      }

      const handled = await this.handler.handle(classified.message, { agentId, principal: principal.principal, session });
      sendRpc(reply, accept, 200, handled.response, handled.headers);
    } catch (error) {
      const incident = randomUUID();
      this.logger.error({ msg: 'unhandled error on surface A', incident, agent_id: agentId, error: (error as Error).message });
      if (!reply.sent) send(500, null, AgentSurfaceCode.InternalError, `Internal error (incident ${incident})`);
    }
  }

  @Delete()
  async delete(@Param('agentId') agentId: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const principal = await this.authenticate(agentId, req);
    if (!principal.ok) {
      return sendRpc(reply, undefined, 401, failure(null, AgentSurfaceCode.Unauthorized, `Unauthorized: ${principal.reason}`));
    }
    const sessionId = header(req, SESSION_HEADER);
    if (!sessionId) {
      return sendRpc(reply, undefined, 400, failure(null, AgentSurfaceCode.InvalidRequest, 'Mcp-Session-Id header required'));
    }
    const ended = await this.sessions.end(sessionId, agentId, principal.principal.id);
    if (!ended) return sendRpc(reply, undefined, 404, failure(null, AgentSurfaceCode.InvalidRequest, 'Session not found'));
    void reply.status(204).send();
  }

  /** No server-initiated stream yet: say so, as the spec allows. */
  @Get()
  get(@Res() reply: FastifyReply): void {
    void reply.status(405).header('allow', 'POST, DELETE').send();
  }

  private async authenticate(agentId: string, req: FastifyRequest) {
    if (!AGENT_ID_PATTERN.test(agentId)) return { ok: false as const, reason: 'unknown agent' };
    const presented = req.headers[API_KEY_HEADER];
    if (Array.isArray(presented)) return { ok: false as const, reason: 'exactly one X-Agent-API-Key header' };
    return this.auth.authenticate(presented, agentId);
  }
}

function header(req: FastifyRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

