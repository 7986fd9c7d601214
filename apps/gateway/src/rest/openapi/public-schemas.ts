import { PROBLEM_TYPE_PREFIX } from '../problems';
import { nullable, ref, TIMESTAMP } from './openapi-parts';

/** The component schemas of the public OpenAPI document (public-openapi.ts). */
export const schemas = {
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
