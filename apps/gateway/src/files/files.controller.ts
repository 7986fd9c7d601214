import { Controller, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AgentAuthenticator, bearerToken } from '../auth/agent-authenticator.service';
import { ApiKeyAuthenticator } from '../auth/api-key-authenticator.service';
import { OAuthAuthenticator } from '../oauth/oauth-authenticator.service';
import { RuntimeGrantAuthenticator } from '../grants/runtime-grant-authenticator.service';
import { taskCaller } from '../grants/task-caller';
import { FileHttpError, fileErrors } from './file-errors';
import { FilesService, type FileOwner } from './files.service';

/**
 * `POST /api/v1/files/presign-upload`, authenticated like the MCP endpoints: an
 * agent API key (`X-Agent-API-Key`: the file is for that key's agent and
 * caller), a RuntimeGrant (`Authorization: Bearer`: for the grant's agent and
 * task), or, with OAuth on, a JWT access token (for the agent its audience
 * names, and its user).
 */
@Controller('api/v1/files')
export class FilesController {
  constructor(
    private readonly files: FilesService,
    private readonly apiKeys: ApiKeyAuthenticator,
    private readonly grants: RuntimeGrantAuthenticator,
    private readonly oauth: OAuthAuthenticator,
    private readonly agentAuth: AgentAuthenticator,
  ) {}

  @Post('presign-upload')
  async presignUpload(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    try {
      const owner = await this.owner(req);
      const answer = await this.files.presignUpload(owner, parseJson(req.body));
      await reply.status(201).send(answer);
    } catch (error) {
      if (!(error instanceof FileHttpError)) throw error;
      await reply.status(error.status).send(error.body());
    }
  }

  private async owner(req: FastifyRequest): Promise<FileOwner> {
    const key = req.headers['x-agent-api-key'];
    if (key !== undefined) {
      // The key names its agent; whether that agent takes keys now (`agent auth --api-keys off`)
      // is the agent authenticator's to say, as on every other route.
      const identified = await this.apiKeys.identify(typeof key === 'string' ? key : undefined);
      if (!identified.ok) throw fileErrors.unauthorized(identified.reason);
      const byKey = await this.agentAuth.authenticate(identified.principal.agentId, req.headers, req.ip);
      if (!byKey.ok) throw fileErrors.unauthorized(byKey.reason);
      return { agentId: byKey.principal.agentId, caller: byKey.principal.callerId };
    }
    const auth = await this.grants.verify(req.raw.rawHeaders);
    if (auth.ok) return { agentId: auth.grant.agentId, caller: taskCaller(auth.grant) };
    // Not a grant: an OAuth access token, for the agent its audience names (and checked for it).
    const token = this.oauth.enabled ? bearerToken(req.headers.authorization) : undefined;
    const agentId = token && this.oauth.agentOf(token);
    if (agentId) {
      const byToken = await this.agentAuth.authenticate(agentId, req.headers, req.ip);
      if (!byToken.ok) throw fileErrors.unauthorized(byToken.reason);
      return { agentId, caller: byToken.principal.callerId };
    }
    throw fileErrors.unauthorized(`send X-Agent-API-Key or a RuntimeGrant: ${auth.reason}`);
  }
}

function parseJson(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body);
  } catch {
    throw fileErrors.invalid('the body must be JSON: {"filename", "content_type", "size"}');
  }
}
