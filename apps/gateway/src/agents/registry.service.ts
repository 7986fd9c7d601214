import { Inject, Injectable, Logger } from '@nestjs/common';
import { InvalidRequestError, NUL_REFUSAL, RegisterAgentRequest, holdsNul, parseAs } from '@mcpgw/contracts';
import { headerParamsOf } from '../catalogue/header-params';
import { schemaLimitsFrom } from '../catalogue/schema-limits';
import { validatorCompiler } from '../catalogue/tool-validator';
import { UriTemplate } from '../catalogue/uri-template';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { AgentsStore } from './agents.store';

/**
 * Agent pods announce their skills here; the catalogue follows. What comes from
 * an agent is checked here, so a bad skill is refused at registration, never at
 * call time: input schemas compile (within the limits, patterns on RE2), their
 * `x-mcp-header` annotations follow the rules, and resource templates parse
 * (catalogue/README.md).
 */
@Injectable()
export class RegistryService {
  private readonly logger = new Logger(RegistryService.name);

  constructor(
    private readonly agents: AgentsStore,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  /** `sender`: the agent the registration subject names (only its credentials may publish there). */
  async register(plain: unknown, sender: string | undefined): Promise<{ registered: number }> {
    const parsed = parseAs(RegisterAgentRequest, plain);
    if (!parsed.ok) throw new InvalidRequestError('invalid registration', parsed.errors);
    if (holdsNul(plain)) throw new InvalidRequestError(`invalid registration: ${NUL_REFUSAL}`);
    if (parsed.value.agent_id !== sender) {
      throw new InvalidRequestError('agent_id must be the agent named by the registration subject');
    }
    const {
      agent_id,
      workspace_id,
      pod_id,
      skills,
      resources = [],
      resource_templates = [],
      prompts = [],
    } = parsed.value;
    const names = new Set<string>();
    const compile = validatorCompiler(schemaLimitsFrom(this.env));
    for (const skill of skills) {
      if (names.has(skill.name)) throw new InvalidRequestError(`skill ${skill.name} is registered twice`);
      names.add(skill.name);
      try {
        compile(skill.input_schema);
        headerParamsOf(skill.input_schema);
      } catch (error) {
        throw new InvalidRequestError(`skill ${skill.name}: invalid input_schema: ${(error as Error).message}`);
      }
    }
    for (const { uriTemplate } of resource_templates) {
      try {
        UriTemplate.parse(uriTemplate);
      } catch (error) {
        throw new InvalidRequestError(`resource template: ${(error as Error).message}`);
      }
    }
    await this.agents.replaceTools(agent_id, workspace_id, skills, { resources, resource_templates, prompts });
    this.logger.log({ msg: 'agent registered', agent_id, workspace_id, pod_id, skills: skills.length });
    return { registered: skills.length };
  }
}
