import { PROBLEM_CONTENT_TYPE } from '../problems';
import {
  AGENT,
  answer,
  BY_AGENT,
  BY_ANY,
  BY_GRANT,
  CALL,
  DELIVERY,
  json,
  problems,
  ref,
  refusals,
  WEBHOOK,
  WORKSPACE,
} from './openapi-parts';
import { schemas } from './public-schemas';

/**
 * The public surface's OpenAPI 3.1 document, served at `GET /api/v1/openapi.json`
 * (README.md beside this file). Written here, beside the routes it describes,
 * rather than derived from decorators: the answers are written by hand in the
 * controllers (Fastify replies, problem bodies), so decorators would only
 * restate them. `public-openapi.spec.ts` holds it to the routes the
 * application registers, both ways; the e2e tests check answers against it.
 */

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
