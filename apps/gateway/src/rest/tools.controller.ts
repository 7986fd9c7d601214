import { Controller, Get, Logger, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ToolCatalogueService, type CatalogueTool } from '../catalogue/tool-catalogue.service';
import { sendProblem } from './problems';
import { RestAuthenticator, type Authenticated } from './rest-authenticator.service';
import { callerMayUse } from '../auth/caller';

/**
 * `GET /api/v1/agents/{agent_id}/tools` and its grant twin: the agent's
 * catalogue as the caller may use it (the OAuth tools claim, the grant's
 * list), each tool with its JSON Schemas.
 */
@Controller()
export class ToolsController {
  private readonly logger = new Logger(ToolsController.name);

  constructor(
    private readonly auth: RestAuthenticator,
    private readonly catalogue: ToolCatalogueService,
  ) {}

  @Get('api/v1/agents/:agentId/tools')
  async byKey(@Param('agentId') agentId: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    await this.list(req, reply, () => this.auth.ofAgent(agentId, req));
  }

  @Get('workspaces/:workspaceId/agents/:agentId/tools')
  async byGrant(
    @Param('workspaceId') workspaceId: string,
    @Param('agentId') agentId: string,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    await this.list(req, reply, () => this.auth.ofGrant(workspaceId, agentId, req));
  }

  private async list(req: FastifyRequest, reply: FastifyReply, authenticate: () => Promise<Authenticated>) {
    try {
      const auth = await authenticate();
      if (!auth.ok) return sendProblem(reply, auth.failure, req.id);
      const { tools } = await this.catalogue.forAgent(auth.caller.agentId);
      const visible = tools.filter((tool) => callerMayUse(auth.caller, tool));
      void reply.status(200).send({ tools: visible.map(toRestTool) });
    } catch (error) {
      this.logger.error({ msg: 'unhandled error listing tools', request_id: req.id, error: (error as Error).message });
      sendProblem(reply, { kind: 'internal' }, req.id);
    }
  }
}

/** A tool as REST lists it: the skill's definition, every field present exactly when set. */
function toRestTool({ definition: d }: CatalogueTool) {
  return {
    name: d.name,
    ...(d.title ? { title: d.title } : {}),
    ...(d.description ? { description: d.description } : {}),
    input_schema: d.input_schema,
    ...(d.output_schema ? { output_schema: d.output_schema } : {}),
    side_effect_class: d.side_effect_class ?? 'write',
    ...(d.annotations ? { annotations: d.annotations } : {}),
  };
}
