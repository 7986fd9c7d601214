import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  GatewayActivity,
  GatewayNotices,
  InvalidRequestError,
  UNSTORABLE_TEXT_REFUSAL,
  RegisterAgentRequest,
  holdsUnstorableText,
  parseAs,
  type ActivityEvent,
  type SkillDefinition,
} from '@mcpgw/contracts';
import { BusClient } from '@mcpgw/bus';
import { canonicalJson } from '../idempotency/fingerprint';
import { headerParamsOf } from '../catalogue/header-params';
import { schemaLimitsFrom } from '../catalogue/schema-limits';
import { validatorCache } from '../catalogue/validator-cache';
import { UriTemplate } from '../catalogue/uri-template';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { ToolPinning } from '../tool-pinning/tool-pinning.service';
import { AgentsStore, type AgentExtras } from './agents.store';
import { PodsStore } from './pods.store';

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
    private readonly pods: PodsStore,
    private readonly bus: BusClient,
    private readonly pinning: ToolPinning,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  /** What the agent's lists are now, as canonical text (a pod registers again at every start). */
  private async lists(agentId: string): Promise<Lists> {
    const [tools, extras] = await Promise.all([this.agents.tools(agentId), this.agents.extras(agentId)]);
    return listsOf(
      tools.map((t) => t.definition as SkillDefinition),
      extras,
    );
  }

  /**
   * Tell every gateway replica which of the agent's lists changed (GatewayNotices):
   * their `subscriptions/listen` streams pass it on (mcp/subscriptions/README.md).
   */
  private announce(agentId: string, before: Lists, after: Lists): void {
    for (const list of ['tools', 'prompts', 'resources'] as const) {
      if (before[list] !== after[list]) this.bus.publish(GatewayNotices.at(agentId), { kind: `${list}_list_changed` });
    }
  }

  /** `sender`: the agent the registration subject names (only its credentials may publish there). */
  async register(plain: unknown, sender: string | undefined): Promise<{ registered: number }> {
    const parsed = parseAs(RegisterAgentRequest, plain);
    if (!parsed.ok) throw new InvalidRequestError('invalid registration', parsed.errors);
    if (holdsUnstorableText(plain)) throw new InvalidRequestError(`invalid registration: ${UNSTORABLE_TEXT_REFUSAL}`);
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
      completions = false,
      conversation = false,
    } = parsed.value;
    const names = new Set<string>();
    for (const skill of skills) {
      if (names.has(skill.name)) throw new InvalidRequestError(`skill ${skill.name} is registered twice`);
      names.add(skill.name);
    }
    // Compiled once per distinct schema in this process: the catalogue reuses them (validator-cache.ts).
    const compiled = validatorCache(schemaLimitsFrom(this.env)).compileEach(skills.map((skill) => skill.input_schema));
    skills.forEach((skill, i) => {
      try {
        if (compiled[i] instanceof Error) throw compiled[i];
        headerParamsOf(skill.input_schema);
      } catch (error) {
        throw new InvalidRequestError(`skill ${skill.name}: invalid input_schema: ${(error as Error).message}`);
      }
    });
    for (const { uriTemplate } of resource_templates) {
      try {
        UriTemplate.parse(uriTemplate);
      } catch (error) {
        throw new InvalidRequestError(`resource template: ${(error as Error).message}`);
      }
    }
    const before = await this.lists(agent_id);
    const extras = { resources, resource_templates, prompts, completions, conversation };
    // What is served: the approved definitions, under the agent's tool-change policy (../tool-pinning/).
    const served = await this.agents.replaceTools(
      agent_id,
      workspace_id,
      skills,
      extras,
      this.pinning.admitting(agent_id, skills),
    );
    await this.pods.registered(agent_id, pod_id);
    this.announce(agent_id, before, listsOf(served, extras));
    this.logger.log({
      msg: 'agent registered',
      agent_id,
      workspace_id,
      pod_id,
      skills: skills.length,
      served: served.length,
    });
    // For the live consoles (admin-api/live/): a pod came (a pod registers at every start).
    const came: ActivityEvent = { kind: 'registration', agent_id, pod_id, tools: skills.length, at: now() };
    this.bus.publish(GatewayActivity, came);
    return { registered: skills.length };
  }
}

type Lists = Record<'tools' | 'prompts' | 'resources', string>;

/** The three lists a client can watch, each as one comparable text (sorted by name, then canonical order). */
function listsOf(skills: SkillDefinition[], extras: AgentExtras): Lists {
  const sorted = <T>(items: T[], key: (item: T) => string) =>
    [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return {
    tools: canonicalJson(sorted(skills, (s) => s.name)),
    prompts: canonicalJson(sorted(extras.prompts, (p) => p.name)),
    resources: canonicalJson([
      sorted(extras.resources, (r) => r.uri),
      sorted(extras.resource_templates, (t) => t.uriTemplate),
    ]),
  };
}

const now = (): string => new Date().toISOString();
