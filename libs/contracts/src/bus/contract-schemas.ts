import type { SchemaObject } from 'ajv';
import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { getMetadataStorage } from 'class-validator';
import { envelopeSchemas } from '../envelopes/schemas';
import { RegisterAgentRequest } from '../skills/skill-definition';
import { payloadSchemas } from './payload-checks';
import { presenceSchemas } from './presence';

/*
 * The JSON Schemas of everything the bus checks, by payload name, for
 * documents derived from the contract (docs/asyncapi.yaml, written by
 * tools/asyncapi). Nothing here validates: the checks stay where they are.
 */

/**
 * Every payload schema of the bus contract, by name: the ajv schemas of the
 * envelopes (`envelopes/schemas.ts`) and of the other payload checks
 * (`payload-checks.ts`) as ajv compiles them, the registration request as its
 * class-validator decorators check it, and the few payloads whose check adds a
 * rule in code to a schema (`InboxMessage`, `AgentResourceNotice`, `CallEvent`),
 * composed from those. In ajv's dialect: an optional property may be null
 * (`nullable: true`), and `format` is `uuid` or `iso8601` (schemas.ts).
 */
export function contractSchemas(): Record<string, SchemaObject> {
  const envelopes = envelopeSchemas();
  const payloads = payloadSchemas();
  return {
    ...envelopes,
    ...payloads,
    ...presenceSchemas(),
    // checkInboxMessage: a ChatMessage that has its channel.
    InboxMessage: {
      allOf: [
        structuredClone(envelopes.ChatMessage),
        { type: 'object', required: ['channel_id'], properties: { channel_id: { type: 'string', format: 'uuid' } } },
      ],
    },
    // checkCallEvent: told apart by `type`; anything else is checked as a log event.
    CallEvent: {
      oneOf: ['ProgressEvent', 'LogEvent', 'InputRequestEvent', 'PollEvent'].map((name) =>
        structuredClone(envelopes[name]),
      ),
    },
    // checkAgentNotice: an agent's own notices are resource updates, with their uri.
    AgentResourceNotice: {
      allOf: [
        structuredClone(payloads.AgentNotice),
        { type: 'object', required: ['kind', 'uri'], properties: { kind: { const: 'resource_updated' } } },
      ],
    },
    RegisterAgentRequest: decoratorSchema(RegisterAgentRequest),
  };
}

/**
 * The JSON Schema of a class checked by its class-validator decorators
 * (`validateByDecorators`), read from class-validator's metadata. Only the
 * decorators the contract classes use are known; any other throws, so a new
 * one cannot be left out of the published contract unnoticed.
 */
export function decoratorSchema(cls: ClassConstructor<object>): SchemaObject {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false);
  const properties: Record<string, SchemaObject> = {};
  const optional = new Set<string>();
  for (const meta of metadata) {
    const name = meta.propertyName;
    const property = (properties[name] ??= {});
    // `each`: the rule holds for every item of an array.
    const target: SchemaObject = meta.each ? ((property.items as SchemaObject | undefined) ?? {}) : property;
    if (meta.each) property.items = target;
    const constraints = (meta.constraints ?? []) as unknown[];
    if (meta.type === 'conditionalValidation' && meta.name === 'isOptional') {
      optional.add(name);
      continue;
    }
    if (meta.type === 'nestedValidation') {
      Object.assign(target, decoratorSchema(nestedClass(cls, name, Boolean(meta.each))));
      continue;
    }
    switch (meta.type === 'customValidation' ? meta.name : meta.type) {
      case 'matches':
        Object.assign(target, { type: 'string', pattern: (constraints[0] as RegExp).source });
        break;
      case 'isString':
        target.type = 'string';
        break;
      case 'maxLength':
        Object.assign(target, { type: 'string', maxLength: constraints[0] });
        break;
      case 'isBoolean':
        target.type = 'boolean';
        break;
      case 'isObject':
        target.type = 'object';
        break;
      case 'isIn': {
        const values = [...(constraints[0] as unknown[])];
        const types = new Set(values.map((value) => typeof value));
        // A type as well: ajv's `nullable` (an optional property) needs one.
        Object.assign(target, types.size === 1 ? { type: [...types][0], enum: values } : { enum: values });
        break;
      }
      case 'isArray':
        target.type = 'array';
        break;
      case 'arrayMaxSize':
        Object.assign(target, { type: 'array', maxItems: constraints[0] });
        break;
      default:
        throw new Error(`${cls.name}.${name}: no JSON Schema for the decorator ${meta.name ?? meta.type}`);
    }
  }
  // Keep the order of the class's properties, not of the decorators' metadata.
  const names = Object.keys(properties);
  const required = names.filter((name) => !optional.has(name));
  const ordered = Object.fromEntries(
    names.map((name) => [name, optional.has(name) ? { ...properties[name], nullable: true } : properties[name]]),
  );
  return required.length ? { type: 'object', required, properties: ordered } : { type: 'object', properties: ordered };
}

/** The class `@Type` names for a nested property: class-transformer's own answer, through its public API. */
function nestedClass(cls: ClassConstructor<object>, property: string, each: boolean): ClassConstructor<object> {
  const sample = plainToInstance(cls, { [property]: each ? [{}] : {} }) as Record<string, unknown>;
  const value = sample[property];
  const item = (each ? (value as unknown[])[0] : value) as object;
  if (item.constructor === Object) throw new Error(`${cls.name}.${property}: nested, but no @Type names its class`);
  return item.constructor as ClassConstructor<object>;
}
