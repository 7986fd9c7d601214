import { createHash } from 'node:crypto';
import { API_KEY_HEADER } from '../auth/agent-authenticator.service';
import type { CatalogueTool } from '../catalogue/tool-catalogue.service';
import { LEGACY_VERSION } from './compat-v03';
import { A2A_VERSION, type AgentCard, type AgentSkill, type SecurityRequirement, type SecurityScheme } from './wire';

/** The card extension that carries each skill's JSON Schemas (A2A skills have no schema member). */
export const SKILL_SCHEMAS_EXTENSION = 'urn:mcpgw:a2a:skill-schemas:v1';

/**
 * The card extension that says the agent converses: it registered a message handler, so a
 * message that names no skill reaches it (A2A has no capability for that; a client need not
 * understand it, so it is not required). Absent from an agent's card without a handler.
 */
export const CONVERSATION_EXTENSION = 'urn:mcpgw:a2a:conversation:v1';

/** How callers authenticate at the card's interfaces. */
export type CardSecurity =
  /** An agent's path: its API key; an OAuth token too when an issuer may reach the agent. */
  | { via: 'agent'; oauthMetadataUrl?: string; scopes?: readonly string[] }
  /** A RuntimeGrant path: the grant, as a bearer token. */
  | { via: 'grant' };

export interface CardInput {
  agentId: string;
  /** The A2A root of this card: `…/a2a/{agent_id}` or `…/workspaces/{ws}/agents/{agent_id}/a2a`. */
  root: string;
  /** The skills to list: the served catalogue (tool pinning's approved definitions), filtered for a grant. */
  tools: readonly CatalogueTool[];
  security: CardSecurity;
  /** The agent's pods registered a message handler, and this card's callers may use it (a grant may not). */
  conversation: boolean;
}

const MODES = ['application/json', 'text/plain'];

/**
 * An agent's A2A card: one skill per tool of its served catalogue, the two
 * bindings (JSON-RPC first, then HTTP+JSON under `/rest`), and how to
 * authenticate. `version` is a digest of the skills, so the card's version
 * changes exactly when its catalogue does.
 */
export function agentCard({ agentId, root, tools, security, conversation }: CardInput): AgentCard {
  const skills = tools.map(toSkill);
  const converses = conversation ? '; a message that names none goes to its message handler' : '';
  return {
    name: agentId,
    description: `The agent ${agentId}: each skill is one of its tools; name it in the message's metadata.skill${converses}.`,
    supportedInterfaces: [
      { url: root, protocolBinding: 'JSONRPC', protocolVersion: A2A_VERSION },
      { url: `${root}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: A2A_VERSION },
      // 0.3 clients: the same JSON-RPC endpoint, without A2A-Version (compat-v03.ts).
      { url: root, protocolBinding: 'JSONRPC', protocolVersion: LEGACY_VERSION },
    ],
    version: catalogueVersion(tools),
    capabilities: {
      streaming: true,
      pushNotifications: true,
      extendedAgentCard: false,
      extensions: [
        {
          uri: SKILL_SCHEMAS_EXTENSION,
          description: "Each skill's arguments (inputSchema) and structured result (outputSchema), as JSON Schema.",
          required: false,
          params: { skills: Object.fromEntries(tools.map(({ definition: d }) => [d.name, schemasOf(d)])) },
        },
        ...(conversation ? [CONVERSATION_CARD_EXTENSION] : []),
      ],
    },
    ...securityOf(security),
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills,
  };
}

const CONVERSATION_CARD_EXTENSION = {
  uri: CONVERSATION_EXTENSION,
  description:
    "A message whose metadata names no skill is a conversational message for the agent's message handler: " +
    'its text parts and first data part, its answer an agent message; one contextId is one conversation. ' +
    'Not to a RuntimeGrant or an OAuth token limited to named tools (UnsupportedOperationError).',
  required: false,
  params: {},
};

function toSkill({ definition: d }: CatalogueTool): AgentSkill {
  const tags = [d.side_effect_class, d.kind].filter((tag): tag is string => typeof tag === 'string');
  return {
    id: d.name,
    name: d.title ?? d.name,
    description: d.description,
    tags: tags.length ? tags : ['tool'],
    examples: examplesOf(d.input_schema),
    inputModes: ['application/json', 'text/plain'],
    outputModes: d.output_schema ? ['application/json'] : MODES,
  };
}

function schemasOf(d: CatalogueTool['definition']) {
  return { inputSchema: d.input_schema, ...(d.output_schema && { outputSchema: d.output_schema }) };
}

/** The schema's own `examples` (JSON Schema 2019-09+), each as the JSON a `data` part would carry. */
function examplesOf(schema: Record<string, unknown>): string[] {
  const examples = schema.examples;
  return Array.isArray(examples) ? examples.slice(0, 5).map((example) => JSON.stringify(example)) : [];
}

function securityOf(security: CardSecurity): Pick<AgentCard, 'securitySchemes' | 'securityRequirements'> {
  if (security.via === 'grant') {
    return {
      securitySchemes: {
        runtimeGrant: {
          httpAuthSecurityScheme: {
            scheme: 'Bearer',
            bearerFormat: 'JWT',
            description: 'A RuntimeGrant for this workspace and agent; it names the skills the task may use.',
          },
        },
      },
      securityRequirements: [{ schemes: { runtimeGrant: { list: [] } } }],
    };
  }
  const schemes: Record<string, SecurityScheme> = {
    apiKey: {
      apiKeySecurityScheme: {
        location: 'header',
        name: headerName(API_KEY_HEADER),
        description: "One of the agent's API keys.",
      },
    },
  };
  const requirements: SecurityRequirement[] = [{ schemes: { apiKey: { list: [] } } }];
  if (security.oauthMetadataUrl) {
    schemes.oauth = {
      oauth2SecurityScheme: {
        oauth2MetadataUrl: security.oauthMetadataUrl,
        description: 'An access token of an issuer the agent trusts (RFC 9728 metadata names them).',
      },
    };
    requirements.push({ schemes: { oauth: { list: [...(security.scopes ?? [])] } } });
  }
  return { securitySchemes: schemes, securityRequirements: requirements };
}

/** `x-agent-api-key` → `X-Agent-API-Key`, as the docs write it. */
function headerName(lower: string): string {
  return lower
    .split('-')
    .map((word) => (word === 'api' ? 'API' : word.charAt(0).toUpperCase() + word.slice(1)))
    .join('-');
}

/** `1.0.<12 hex>`: a digest of the served definitions, in a stable order. */
function catalogueVersion(tools: readonly CatalogueTool[]): string {
  const hash = createHash('sha256');
  for (const tool of [...tools].sort((a, b) => a.definition.name.localeCompare(b.definition.name))) {
    hash.update(JSON.stringify(tool.definition)).update('\n');
  }
  return `1.0.${hash.digest('hex').slice(0, 12)}`;
}
