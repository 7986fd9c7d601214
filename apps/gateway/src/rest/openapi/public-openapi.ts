import { PROBLEM_CONTENT_TYPE, PROBLEM_TYPE_PREFIX } from '../problems';

/**
 * The public surface's OpenAPI 3.1 document, served at `GET /api/v1/openapi.json`
 * (README.md beside this file). Written here, beside the routes it describes,
 * rather than derived from decorators: the answers are written by hand in the
 * controllers (Fastify replies, problem bodies), so decorators would only
 * restate them. `public-openapi.spec.ts` holds it to the routes the
 * application registers, both ways; the e2e tests check answers against it.
 */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ 'application/json': { schema } });
const answer = (description: string, schema: object, headers?: object) => ({
  description,
  ...(headers && { headers }),
  content: json(schema),
});
const problems = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((status) => [String(status), { $ref: `#/components/responses/Problem${status}` }]));
const refusals = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((status) => [String(status), { $ref: `#/components/responses/Refusal${status}` }]));

const param = (name: string, description: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string', minLength: 1 },
});
const AGENT = param('agent_id', 'The agent, as registered');
const WORKSPACE = param('workspace_id', 'The workspace the RuntimeGrant was minted for');
const CALL = param('call_id', 'The call id of a call made with `Prefer: respond-async`');
const WEBHOOK = param('webhook_id', 'A webhook of this caller (`wh_…`)');
const DELIVERY = param('delivery_id', 'A delivery of one of this caller’s webhooks');

/** Who may call a route: an agent API key or OAuth token (surface A), a RuntimeGrant (surface B), or any of them. */
const BY_AGENT = [{ agentApiKey: [] }, { oauth: [] }];
const BY_GRANT = [{ runtimeGrant: [] }];
const BY_ANY = [...BY_AGENT, ...BY_GRANT];

const PREFER = {
  name: 'Prefer',
  in: 'header',
  required: false,
  description:
    '`wait=<seconds>` sets the call’s timeout (within CALL_TIMEOUT_MAX_MS); `respond-async` runs it as a task ' +
    '(202, then `GET /api/v1/calls/{call_id}`), unless the body has an `idempotency_key`.',
  schema: { type: 'string', examples: ['wait=30', 'respond-async'] },
};

const invokeResponses = {
  '200': {
    description:
      'The agent’s answer. A tool error the model could correct is a 200 with `is_error: true`. With ' +
      '`Accept: text/event-stream` (and not `application/json`): `progress` and `log` events in order, then one ' +
      '`result` (an InvokeResult) or `error` (a Problem) event.',
    headers: {
      'Idempotent-Replayed': {
        description: '`true` on a replay of a keyed call: the first answer, byte for byte',
        schema: { type: 'string', enum: ['true'] },
      },
    },
    content: {
      ...json(ref('InvokeResult')),
      'text/event-stream': {
        schema: { type: 'string', description: 'Server-sent events: progress, log, result, error' },
      },
    },
  },
  '202': answer('Runs as a task (`Prefer: respond-async`)', ref('CallState'), {
    Location: { description: '`/api/v1/calls/{call_id}`', schema: { type: 'string' } },
    'Preference-Applied': { description: '`respond-async`', schema: { type: 'string' } },
  }),
  ...problems(400, 401, 403, 404, 410, 422, 429, 500, 503, 504),
};

const invokeBody = {
  required: true,
  content: json(ref('InvokeRequest')),
};

const toolsResponses = {
  '200': answer('The tools this caller may call, each with its JSON Schemas', ref('ToolList')),
  ...problems(401, 403, 500, 503),
};

const callResponses = {
  '200': answer('The call’s state, and its result once it ended', ref('CallState')),
  ...problems(401, 403, 404, 422, 500, 503),
};

const webhookResponses = (status: string, description: string, schema: object) => ({
  [status]: answer(description, schema),
  ...refusals(400, 401, 403, 404, 429, 503),
});

const nullable = (schema: object) => ({ oneOf: [schema, { type: 'null' }] });
const TIMESTAMP = { type: 'string', format: 'date-time' };

const schemas = {
  Problem: {
    type: 'object',
    description:
      'An RFC 9457 problem with the MCP error code surface A would send (`code`). Extensions by type: ' +
      '`errors` (invalid-arguments), `limit`, `max` (quota-exceeded), `request_id` (internal).',
    required: ['type', 'title', 'status', 'detail', 'code'],
    additionalProperties: true,
    properties: {
      type: { type: 'string', pattern: `^${PROBLEM_TYPE_PREFIX}[a-z-]+$` },
      title: { type: 'string' },
      status: { type: 'integer', minimum: 400, maximum: 599 },
      detail: { type: 'string' },
      code: { type: 'integer', description: 'The JSON-RPC error code of the same failure on MCP' },
      errors: { type: 'array', items: {}, description: 'invalid-arguments: why the arguments fail the inputSchema' },
      request_id: { type: 'string' },
    },
  },
  Refusal: {
    type: 'object',
    description: 'The webhooks API’s refusals (the gateway’s REST error form, older than the problems)',
    required: ['error', 'message'],
    properties: {
      error: { type: 'string', description: '`invalid_request`, `not_found`, `unavailable`, `http_error`, `internal`' },
      message: { type: 'string' },
      details: {},
    },
  },
  FileError: {
    type: 'object',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        additionalProperties: false,
        properties: {
          code: {
            type: 'string',
            examples: ['unauthorized', 'invalid_request', 'file_too_large', 'file_quota_exceeded'],
          },
          message: { type: 'string' },
        },
      },
    },
  },
  InvokeRequest: {
    type: 'object',
    required: ['tool'],
    additionalProperties: false,
    properties: {
      tool: { type: 'string', minLength: 1 },
      arguments: {
        type: 'object',
        additionalProperties: true,
        description: 'The tool’s input: its schema is the tool’s `input_schema` (GET /api/v1/agents/{agent_id}/tools)',
      },
      attachments: {
        type: 'array',
        description: 'Files uploaded first (POST /api/v1/files/presign-upload); the agent gets a signed URL for each',
        items: {
          type: 'object',
          required: ['file_id'],
          properties: {
            file_id: { type: 'string' },
            filename: { type: 'string' },
            content_type: { type: 'string' },
          },
        },
      },
      idempotency_key: {
        type: 'string',
        minLength: 1,
        maxLength: 255,
        pattern: '^[\\x20-\\x7e]+$',
        description: 'Shared with MCP tools/call for the same credential',
      },
      call_id: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' },
    },
  },
  ContentItem: {
    type: 'object',
    description: 'An MCP content item (text, image, audio, resource_link, resource)',
    required: ['type'],
    additionalProperties: true,
    properties: { type: { type: 'string' } },
  },
  InvokeResult: {
    type: 'object',
    required: ['call_id', 'tool', 'output', 'content', 'is_error', 'created_at'],
    additionalProperties: false,
    properties: {
      call_id: { type: 'string' },
      tool: { type: 'string' },
      output: {
        type: 'object',
        additionalProperties: true,
        description: 'The tool’s structured result, or `{"text": …}` when the agent answered in text only',
      },
      content: { type: 'array', items: ref('ContentItem') },
      is_error: { type: 'boolean' },
      created_at: TIMESTAMP,
    },
  },
  CallState: {
    type: 'object',
    required: ['call_id', 'tool', 'status', 'created_at', 'updated_at'],
    additionalProperties: false,
    properties: {
      call_id: { type: 'string' },
      tool: { type: 'string' },
      status: { type: 'string', enum: ['working', 'input_required', 'completed', 'failed', 'cancelled'] },
      created_at: TIMESTAMP,
      updated_at: TIMESTAMP,
      result: {
        type: 'object',
        required: ['output', 'content', 'is_error'],
        additionalProperties: false,
        properties: {
          output: { type: 'object', additionalProperties: true },
          content: { type: 'array', items: ref('ContentItem') },
          is_error: { type: 'boolean' },
        },
      },
      error: { description: 'Why a failed call failed' },
    },
  },
  Tool: {
    type: 'object',
    required: ['name', 'input_schema', 'side_effect_class'],
    additionalProperties: false,
    properties: {
      name: { type: 'string' },
      title: { type: 'string' },
      description: { type: 'string' },
      input_schema: {
        type: 'object',
        additionalProperties: true,
        description: 'A JSON Schema: the body’s `arguments`',
      },
      output_schema: {
        type: 'object',
        additionalProperties: true,
        description: 'A JSON Schema: the answer’s `output`',
      },
      side_effect_class: { type: 'string' },
      annotations: { type: 'object', additionalProperties: true },
    },
  },
  ToolList: {
    type: 'object',
    required: ['tools'],
    additionalProperties: false,
    properties: { tools: { type: 'array', items: ref('Tool') } },
  },
  PresignUploadRequest: {
    type: 'object',
    required: ['filename', 'content_type', 'size'],
    properties: {
      filename: { type: 'string', minLength: 1, maxLength: 255 },
      content_type: { type: 'string', maxLength: 255, examples: ['application/pdf'] },
      size: { type: 'integer', minimum: 0, description: 'The bytes to upload, within FILES_MAX_BYTES' },
    },
  },
  PresignedUpload: {
    type: 'object',
    required: ['file_id', 'upload_url', 'expires_at'],
    additionalProperties: false,
    properties: {
      file_id: { type: 'string' },
      upload_url: { type: 'string', format: 'uri', description: 'PUT the bytes here, with the declared Content-Type' },
      expires_at: TIMESTAMP,
    },
  },
  WebhookRequest: {
    type: 'object',
    required: ['url', 'events'],
    properties: {
      url: { type: 'string', format: 'uri' },
      events: {
        description: 'Event type names (`tool_call.completed`, …), as an array or a comma list',
        oneOf: [{ type: 'array', items: { type: 'string' } }, { type: 'string' }],
      },
    },
  },
  Webhook: {
    type: 'object',
    required: [
      'id',
      'agent_id',
      'owner',
      'url',
      'events',
      'created_at',
      'disabled_at',
      'disabled_reason',
      'previous_secret_expires_at',
      'failing_since',
      'last_error',
    ],
    additionalProperties: false,
    properties: {
      id: { type: 'string' },
      agent_id: { type: 'string' },
      owner: nullable({ type: 'string' }),
      url: { type: 'string' },
      events: { type: 'array', items: { type: 'string' } },
      created_at: TIMESTAMP,
      disabled_at: nullable(TIMESTAMP),
      disabled_reason: nullable({ type: 'string' }),
      previous_secret_expires_at: nullable(TIMESTAMP),
      failing_since: nullable(TIMESTAMP),
      last_error: nullable({ type: 'string' }),
    },
  },
  PushSecret: {
    description: 'The caller’s signing secret for its A2A push notifications of this agent (Standard Webhooks)',
    type: 'object',
    required: ['secret'],
    additionalProperties: false,
    properties: { secret: { type: 'string', pattern: '^whsec_' } },
  },
  WebhookWithSecret: {
    description: 'A webhook and its signing secret, shown this once',
    allOf: [ref('Webhook')],
    required: ['secret'],
    properties: { secret: { type: 'string' } },
  },
  Delivery: {
    type: 'object',
    required: ['id', 'webhook_id', 'event_type', 'status', 'attempts', 'created_at', 'attempt_log'],
    properties: {
      id: { type: 'string' },
      webhook_id: { type: 'string' },
      event_type: { type: 'string' },
      status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
      attempts: { type: 'integer', minimum: 0 },
      created_at: TIMESTAMP,
      next_attempt_at: nullable(TIMESTAMP),
      finished_at: nullable(TIMESTAMP),
      last_error: nullable({ type: 'string' }),
      attempt_log: { type: 'array', items: { type: 'object' } },
    },
  },
};

const PROBLEM_STATUSES: Record<number, string> = {
  400: 'malformed-body: the body is not JSON',
  401: 'unauthorized: no, a wrong, or another agent’s credential (`WWW-Authenticate` with OAuth on)',
  403: 'unauthorized (a token short of scopes) or credential-unavailable (the grant’s task lacks a credential)',
  404: 'tool-not-found (for this caller), or not-found (no such call of this caller)',
  410: 'conversation-gone: a retried key whose conversation retention has deleted',
  422: 'invalid-arguments (`errors`), invalid-request, or idempotency-key-reused',
  429: 'quota-exceeded (`Retry-After`, `limit`, `max`)',
  500: 'internal (`request_id` names it in the logs)',
  503: 'unavailable: the bus or message service is down, or grants are not configured here',
  504: 'agent-timeout: the agent did not reply in time',
};
const REFUSALS: Record<number, string> = {
  400: 'The body or an id is malformed, or the caller holds WEBHOOK_MAX_PER_OWNER webhooks already',
  401: 'No, or a wrong, credential',
  403: 'A token short of scopes',
  404: 'No such webhook or delivery of this caller',
  429: 'Too many unknown tokens from this address',
  503: 'Authentication is unavailable',
};

const fileResponses = {
  '201': answer('A pending file and the signed URL to PUT its bytes to', ref('PresignedUpload')),
  ...Object.fromEntries(
    [
      [400, 'invalid_request: filename, content_type or size'],
      [401, 'unauthorized'],
      [413, 'file_too_large: over FILES_MAX_BYTES'],
      [429, 'file_quota_exceeded: the caller’s live files are at FILES_QUOTA_FILES or FILES_QUOTA_BYTES'],
      [503, 'storage_unavailable'],
    ].map(([status, description]) => [String(status), answer(String(description), ref('FileError'))]),
  ),
};

export const PUBLIC_OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'MCP agent gateway public REST API',
    version: '1.0.0',
    description:
      'The gateway’s REST surface on its public port (GATEWAY_PORT), beside the MCP endpoints: invoke a tool, ' +
      'follow a long call, list the tools, upload files, register webhooks. A guide: docs/rest.md. ' +
      'A tool’s argument schema is per agent: `GET /api/v1/agents/{agent_id}/tools` lists them.',
    license: { name: 'UNLICENSED', identifier: 'UNLICENSED' },
  },
  servers: [{ url: '/', description: 'The gateway that serves this document' }],
  tags: [
    { name: 'invoke', description: 'Call a tool (docs/rest.md)' },
    { name: 'calls', description: 'Calls made with `Prefer: respond-async`' },
    { name: 'tools', description: 'The tools a caller may call, with their JSON Schemas' },
    { name: 'files', description: 'Attachments: upload first, then name the file in `attachments`' },
    { name: 'webhooks', description: 'The caller’s own webhooks (the admin API manages the operator’s)' },
    { name: 'a2a-push', description: 'The secret that signs the caller’s A2A push notifications (docs/a2a.md)' },
    { name: 'meta', description: 'This document' },
  ],
  security: BY_ANY,
  paths: {
    '/api/v1/openapi.json': {
      get: {
        operationId: 'getOpenApi',
        tags: ['meta'],
        summary: 'This document',
        security: [],
        responses: {
          '200': answer(
            'The OpenAPI 3.1 document of the public REST surface',
            { type: 'object' },
            {
              'Cache-Control': { schema: { type: 'string' } },
            },
          ),
          '404': answer('Not served here', { type: 'object' }),
        },
      },
    },
    '/api/v1/agents/{agent_id}/invoke': {
      post: {
        operationId: 'invoke',
        tags: ['invoke'],
        summary: 'Call one of the agent’s tools, with an agent API key or an OAuth access token',
        security: BY_AGENT,
        parameters: [AGENT, PREFER],
        requestBody: invokeBody,
        responses: invokeResponses,
      },
    },
    '/workspaces/{workspace_id}/agents/{agent_id}/invoke': {
      post: {
        operationId: 'invokeWithGrant',
        tags: ['invoke'],
        summary: 'Call a tool the RuntimeGrant lists (any other is 404)',
        security: BY_GRANT,
        parameters: [WORKSPACE, AGENT, PREFER],
        requestBody: invokeBody,
        responses: invokeResponses,
      },
    },
    '/api/v1/calls/{call_id}': {
      get: {
        operationId: 'getCall',
        tags: ['calls'],
        summary: 'A call’s state, and its result once completed (only the credential that made it finds it)',
        parameters: [CALL],
        responses: callResponses,
      },
      delete: {
        operationId: 'cancelCall',
        tags: ['calls'],
        summary: 'Cancel a call: the agent is told to stop',
        parameters: [CALL],
        responses: callResponses,
      },
    },
    '/api/v1/agents/{agent_id}/tools': {
      get: {
        operationId: 'listTools',
        tags: ['tools'],
        summary: 'The agent’s tools this caller may call',
        security: BY_AGENT,
        parameters: [AGENT],
        responses: toolsResponses,
      },
    },
    '/workspaces/{workspace_id}/agents/{agent_id}/tools': {
      get: {
        operationId: 'listToolsWithGrant',
        tags: ['tools'],
        summary: 'The tools the RuntimeGrant lists',
        security: BY_GRANT,
        parameters: [WORKSPACE, AGENT],
        responses: toolsResponses,
      },
    },
    '/api/v1/files/presign-upload': {
      post: {
        operationId: 'presignUpload',
        tags: ['files'],
        summary: 'Reserve a file and get the signed URL to upload it to',
        requestBody: { required: true, content: json(ref('PresignUploadRequest')) },
        responses: fileResponses,
      },
    },
    '/api/v1/agents/{agent_id}/webhooks': {
      post: {
        operationId: 'addWebhook',
        tags: ['webhooks'],
        summary: 'Register a webhook that hears this caller’s calls',
        security: BY_AGENT,
        parameters: [AGENT],
        requestBody: { required: true, content: json(ref('WebhookRequest')) },
        responses: webhookResponses('201', 'Registered; its secret is shown this once', ref('WebhookWithSecret')),
      },
      get: {
        operationId: 'listWebhooks',
        tags: ['webhooks'],
        summary: 'This caller’s webhooks of the agent',
        security: BY_AGENT,
        parameters: [AGENT],
        responses: webhookResponses('200', 'The webhooks', { type: 'array', items: ref('Webhook') }),
      },
    },
    '/api/v1/agents/{agent_id}/webhooks/{webhook_id}': {
      delete: {
        operationId: 'removeWebhook',
        tags: ['webhooks'],
        summary: 'Remove one of this caller’s webhooks',
        security: BY_AGENT,
        parameters: [AGENT, WEBHOOK],
        responses: webhookResponses('200', 'The removed webhook', ref('Webhook')),
      },
    },
    '/api/v1/agents/{agent_id}/webhooks/{webhook_id}/rotate-secret': {
      post: {
        operationId: 'rotateWebhookSecret',
        tags: ['webhooks'],
        summary: 'A new secret; the previous one still signs for a while',
        security: BY_AGENT,
        parameters: [AGENT, WEBHOOK],
        responses: webhookResponses('200', 'The webhook and its new secret', ref('WebhookWithSecret')),
      },
    },
    '/api/v1/agents/{agent_id}/webhooks/{webhook_id}/enable': {
      post: {
        operationId: 'enableWebhook',
        tags: ['webhooks'],
        summary: 'Enable a webhook the gateway disabled',
        security: BY_AGENT,
        parameters: [AGENT, WEBHOOK],
        responses: webhookResponses('200', 'The webhook', ref('Webhook')),
      },
    },
    '/api/v1/agents/{agent_id}/webhooks/{webhook_id}/deliveries': {
      get: {
        operationId: 'listWebhookDeliveries',
        tags: ['webhooks'],
        summary: 'The webhook’s latest deliveries, newest first',
        security: BY_AGENT,
        parameters: [AGENT, WEBHOOK],
        responses: webhookResponses('200', 'The deliveries', { type: 'array', items: ref('Delivery') }),
      },
    },
    '/api/v1/agents/{agent_id}/a2a/push-secret': {
      get: {
        operationId: 'readA2aPushSecret',
        tags: ['a2a-push'],
        summary: 'This caller’s A2A push signing secret for the agent (made on first use)',
        security: BY_AGENT,
        parameters: [AGENT],
        responses: webhookResponses('200', 'The secret', ref('PushSecret')),
      },
    },
    '/api/v1/agents/{agent_id}/a2a/push-secret/rotate': {
      post: {
        operationId: 'rotateA2aPushSecret',
        tags: ['a2a-push'],
        summary: 'A new A2A push signing secret; the previous one signs beside it for the rotation window',
        security: BY_AGENT,
        parameters: [AGENT],
        responses: webhookResponses('200', 'The new secret', ref('PushSecret')),
      },
    },
    '/api/v1/agents/{agent_id}/webhooks/deliveries/{delivery_id}/redeliver': {
      post: {
        operationId: 'redeliverWebhookDelivery',
        tags: ['webhooks'],
        summary: 'Send a delivery again',
        security: BY_AGENT,
        parameters: [AGENT, DELIVERY],
        responses: webhookResponses('200', 'The delivery, pending again', ref('Delivery')),
      },
    },
  },
  components: {
    securitySchemes: {
      agentApiKey: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Agent-API-Key',
        description: 'An API key of the agent (`bak_…`), minted with `npm run admin -- key create`',
      },
      oauth: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'With OAuth on: an access token whose audience is the agent’s resource (docs/oauth.md)',
      },
      runtimeGrant: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'RuntimeGrant',
        description: 'A RuntimeGrant for a workspace’s task, minted with `npm run admin -- grant mint`',
      },
    },
    schemas,
    responses: {
      ...Object.fromEntries(
        Object.entries(PROBLEM_STATUSES).map(([status, description]) => [
          `Problem${status}`,
          { description, content: { [PROBLEM_CONTENT_TYPE]: { schema: ref('Problem') } } },
        ]),
      ),
      ...Object.fromEntries(
        Object.entries(REFUSALS).map(([status, description]) => [
          `Refusal${status}`,
          answer(description, ref('Refusal')),
        ]),
      ),
    },
  },
} as const;
