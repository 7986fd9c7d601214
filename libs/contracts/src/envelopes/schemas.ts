import Ajv, { type ErrorObject, type SchemaObject, type ValidateFunction } from 'ajv';
import { AGENT_ID_PATTERN } from '../bus/subjects';
import { AgentReply } from './agent-reply';
import {
  CLIENT_REQUEST_METHODS,
  CancelRequest,
  InputRequestEvent,
  PollEvent,
  LOG_LEVELS,
  LogEvent,
  ProgressEvent,
} from './call-events';
import { CALL_ID_PATTERN } from './call-id';
import { ChatMessage } from './chat-message';
import { CONTENT_TYPES } from './content';
import { CALL_BUDGET_META_KEY } from '../timeouts/call-budget';

/*
 * JSON Schemas for the messages our own services send each other on the bus,
 * compiled once by ajv. They state the rules of the decorators on the contract
 * classes (which stay, as types and as documentation); the decorators are no
 * longer run on these messages. Keep the two in step: validate.spec.ts compares
 * them on a set of messages.
 *
 * As with class-validator today, properties not named here are allowed.
 */

/** What `@IsUUID()` accepts (validator.js `isUUID(str)`, version "all"): UUID versions 1-8, nil and max, any case. */
const UUID =
  /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$/i;

/**
 * What `@IsISO8601()` accepts (validator.js `isISO8601(str)`, not strict): the
 * ISO 8601 shapes (`2024`, `2024-05-01`, `2024-05-01T10:00`, `…Z`, week and
 * ordinal dates); days of the month are not checked against the calendar.
 */
// prettier-ignore
const ISO8601 = /^([\+-]?\d{4}(?!\d{2}\b))((-?)((0[1-9]|1[0-2])(\3([12]\d|0[1-9]|3[01]))?|W([0-4]\d|5[0-3])(-?[1-7])?|(00[1-9]|0[1-9]\d|[12]\d{2}|3([0-5]\d|6[1-6])))([T\s]((([01]\d|2[0-3])((:?)[0-5]\d)?|24:?00)([\.,]\d+(?!:))?)?(\17[0-5]\d([\.,]\d+)?)?([zZ]|([\+-])([01]\d|2[0-3]):?([0-5]\d)?)?)?)?$/;

const string = (maxLength?: number): SchemaObject =>
  maxLength === undefined ? { type: 'string' } : { type: 'string', maxLength };
const uuid: SchemaObject = { type: 'string', format: 'uuid' };
const iso8601: SchemaObject = { type: 'string', format: 'iso8601' };
const agentId: SchemaObject = { type: 'string', pattern: AGENT_ID_PATTERN.source };
const anyObject: SchemaObject = { type: 'object' };

/**
 * An object with `required` properties and `optional` ones. `@IsOptional()`
 * skips null as well as undefined, so optional properties may be null.
 * Properties that take any value (`@Allow()`, no decorator) are not listed.
 */
function object(required: Record<string, SchemaObject>, optional: Record<string, SchemaObject> = {}): SchemaObject {
  const nullable = Object.fromEntries(
    Object.entries(optional).map(([name, schema]) => [name, { ...schema, nullable: true }]),
  );
  return { type: 'object', required: Object.keys(required), properties: { ...required, ...nullable } };
}

const sender = object({ kind: { enum: ['mcp_client', 'agent', 'user'] }, id: string(200) });

const filePart = object(
  { kind: { const: 'file' }, file: object({ uri: string(4096) }, { name: string(255), mimeType: string(255) }) },
  { metadata: anyObject },
);

const chatMessageSchema = object(
  {
    type: { const: 'chat_message' },
    id: uuid,
    agent_id: agentId,
    sender,
    created_at: iso8601,
  },
  {
    channel_id: uuid,
    text: string(),
    data: anyObject,
    tool_call: object({ name: string(128), arguments: anyObject }),
    call_id: { type: 'string', pattern: CALL_ID_PATTERN.source },
    resource_read: object({ uri: string(2048) }),
    prompt_get: object({ name: string(200), arguments: anyObject }),
    complete: object(
      {
        ref: object({ type: { enum: ['ref/prompt', 'ref/resource'] } }, { name: string(200), uri: string(2048) }),
        argument: object({ name: string(200), value: string(2048) }),
      },
      { arguments: anyObject },
    ),
    attachments: { type: 'array', items: filePart },
    // Any delivery hints; the call's budget, when given, is a number of milliseconds.
    meta: { type: 'object', properties: { [CALL_BUDGET_META_KEY]: { type: 'number', minimum: 0 } } },
  },
);

/** The fields every content type needs are checked after this, by `missingContentFields`. */
const contentItem = object(
  { type: { enum: [...CONTENT_TYPES] } },
  { text: string(), data: string(), mimeType: string(), uri: string(), name: string(), resource: anyObject },
);

const agentReplySchema = object(
  {
    type: { const: 'agent_reply' },
    id: uuid,
    channel_id: uuid,
    agent_id: agentId,
    in_reply_to: uuid,
    created_at: iso8601,
    content: { type: 'array', maxItems: 1000, items: contentItem },
  },
  { structured_content: anyObject, is_error: { type: 'boolean' }, meta: anyObject },
);

const progressEventSchema = object(
  { type: { const: 'progress' }, in_reply_to: uuid, progress: { type: 'number' } },
  { total: { type: 'number' }, message: string(1000) },
);

const logEventSchema = object(
  { type: { const: 'log' }, in_reply_to: uuid, level: { enum: [...LOG_LEVELS] } },
  { logger: string(200) },
);

const inputRequestEventSchema = object(
  {
    type: { const: 'input_request' },
    in_reply_to: uuid,
    key: string(64),
    method: { enum: [...CLIENT_REQUEST_METHODS] },
    params: anyObject,
  },
  { channel_id: uuid },
);

const pollEventSchema = object({ type: { const: 'poll' }, in_reply_to: uuid });

const cancelRequestSchema = object({ type: { const: 'cancel' }, message_id: uuid }, { reason: string(1000) });

const schemas = new Map<unknown, SchemaObject>([
  [ChatMessage, chatMessageSchema],
  [AgentReply, agentReplySchema],
  [ProgressEvent, progressEventSchema],
  [LogEvent, logEventSchema],
  [InputRequestEvent, inputRequestEventSchema],
  [PollEvent, pollEventSchema],
  [CancelRequest, cancelRequestSchema],
]);

/**
 * The envelope schemas by contract name, exactly as ajv compiles them (ajv's
 * `nullable` and the `uuid`/`iso8601` formats included): for documents derived
 * from the contract (docs/asyncapi.yaml, `contractSchemas()`). A deep copy.
 */
export function envelopeSchemas(): Record<string, SchemaObject> {
  return structuredClone(
    Object.fromEntries([...schemas].map(([cls, schema]) => [(cls as { name: string }).name, schema])),
  );
}

let ajv: Ajv | undefined;

/** Compile a schema with the one shared ajv instance (and its formats). */
export function compileSchema(schema: SchemaObject): ValidateFunction {
  ajv ??= new Ajv({ allErrors: true, strict: true, formats: { uuid: UUID, iso8601: ISO8601 } });
  return ajv.compile(schema);
}

/** A validator as the checks use it: call it, then read `errors` when it said no. */
export interface Validator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/**
 * A validator compiled at its first use, not when the module loads: every
 * process that imports the contracts (each admin CLI run too) would otherwise
 * compile all of them, about 150 ms of CPU. That every schema of the contract
 * compiles is held by `contract-schemas.spec.ts`, so a schema ajv refuses
 * fails CI, never a check inside a bus subscription's callback.
 */
export function lazyValidator(schema: SchemaObject): Validator {
  let validate: ValidateFunction | undefined;
  const lazy: Validator = (data) => {
    validate ??= compileSchema(schema);
    const ok = validate(data) as boolean;
    lazy.errors = validate.errors;
    return ok;
  };
  return lazy;
}

/** Every contract class's validator (compiled at its first use). */
const compiled = new Map<unknown, Validator>([...schemas].map(([cls, schema]) => [cls, lazyValidator(schema)]));

/** The validator of a contract class; undefined for classes without a schema. */
export function compiledValidator(cls: unknown): Validator | undefined {
  return compiled.get(cls);
}

const articles: Record<string, string> = {
  string: 'a string',
  object: 'an object',
  array: 'an array',
  boolean: 'a boolean value',
  number: 'a number',
};

/** ajv's errors as `path: message` lines, worded like class-validator's (`sender.kind: kind must be one of …`). */
export function describeErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((error) => {
    const segments = error.instancePath
      .split('/')
      .slice(1)
      .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (error.keyword === 'required') segments.push(String(error.params.missingProperty));
    const path = segments.join('.');
    const last = segments[segments.length - 1] ?? '';
    const name = /^\d+$/.test(last) ? `each value in ${segments.slice(0, -1).join('.')}` : last;
    return `${path || '(message)'}: ${name ? `${name} ` : ''}${describe(error)}`;
  });
}

function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'type':
      return `must be ${articles[String(params.type)] ?? String(params.type)}`;
    case 'const':
      return `must be equal to ${String(params.allowedValue)}`;
    case 'enum':
      return `must be one of the following values: ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'format':
      return params.format === 'uuid' ? 'must be a UUID' : 'must be a valid ISO 8601 date string';
    case 'pattern':
      return `must match /${String(params.pattern)}/ regular expression`;
    case 'maxLength':
      return `must be shorter than or equal to ${String(params.limit)} characters`;
    case 'maxItems':
      return `must contain no more than ${String(params.limit)} elements`;
    default:
      return error.message ?? 'is invalid';
  }
}
