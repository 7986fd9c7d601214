import type { ChangeEvent } from 'react';

/*
 * A form generated from a tool's input JSON Schema (the playground): a field
 * per top-level property (strings, numbers and integers, booleans, enums),
 * required ones marked; anything else (nested objects, arrays, unions) is a
 * JSON text area. A schema that is not an object of properties is edited as
 * one JSON text. The gateway checks the arguments again with the tool's
 * compiled schema: this form only helps and explains.
 */

type Schema = Record<string, unknown>;
export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';
export interface Field {
  name: string;
  kind: FieldKind;
  required: boolean;
  schema: Schema;
  options?: unknown[];
}
/** What the operator typed, by field name (a boolean field holds `true`/`false`/``). */
export type Values = Record<string, string>;

/** The fields of a schema; undefined when it is not an object with properties (edit it as JSON). */
export function fieldsOf(schema: Schema): Field[] | undefined {
  const properties = schema.properties;
  if (schema.type !== 'object' || typeof properties !== 'object' || properties === null) return undefined;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.entries(properties as Record<string, Schema>).map(([name, property]) => ({
    name,
    required: required.has(name),
    schema: property,
    ...kindOf(property),
  }));
}

function kindOf(schema: Schema): { kind: FieldKind; options?: unknown[] } {
  if (Array.isArray(schema.enum) && schema.enum.every((v) => v === null || typeof v !== 'object')) {
    return { kind: 'enum', options: schema.enum };
  }
  if (schema.type === 'string' || schema.type === 'number' || schema.type === 'integer' || schema.type === 'boolean') {
    return { kind: schema.type };
  }
  return { kind: 'json' };
}

/** The initial text of each field: the schema's default when it has one. */
export function initialValues(fields: Field[]): Values {
  const values: Values = {};
  for (const field of fields) {
    const given = field.schema.default;
    if (given === undefined) values[field.name] = '';
    else if (field.kind === 'enum') values[field.name] = String(Math.max(field.options!.indexOf(given), 0));
    else values[field.name] = field.kind === 'json' ? JSON.stringify(given, null, 2) : String(given);
  }
  return values;
}

/** The arguments the values make, or the problem of each field that has one. */
export function argumentsOf(
  fields: Field[],
  values: Values,
): { args: Record<string, unknown>; problems: Record<string, string> } {
  const args: Record<string, unknown> = {};
  const problems: Record<string, string> = {};
  for (const field of fields) {
    const raw = values[field.name] ?? '';
    if (raw.trim() === '') {
      if (field.required) problems[field.name] = `${field.name} is required.`;
      continue;
    }
    const value = parse(field, raw);
    if (value instanceof Error) problems[field.name] = value.message;
    else args[field.name] = value;
  }
  return { args, problems };
}

/** A field's value from its text (a string as typed; the others without surrounding spaces). */
function parse(field: Field, raw: string): unknown {
  const text = raw.trim();
  switch (field.kind) {
    case 'string':
      return raw;
    case 'number':
    case 'integer': {
      const n = Number(text);
      if (!Number.isFinite(n)) return new Error(`${field.name} must be a number.`);
      if (field.kind === 'integer' && !Number.isInteger(n)) return new Error(`${field.name} must be a whole number.`);
      return n;
    }
    case 'boolean':
      return text === 'true';
    case 'enum':
      // The select holds the option's index (values may be numbers, strings, null).
      return field.options![Number(text)];
    default:
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return new Error(`${field.name} must be JSON (for example {"key": "value"} or [1, 2]).`);
      }
  }
}

/** The form's fields, each labelled, its help and problem tied to it (aria-describedby, aria-invalid). */
export function SchemaFields({
  fields,
  values,
  problems,
  onChange,
}: {
  fields: Field[];
  values: Values;
  problems: Record<string, string>;
  onChange: (name: string, value: string) => void;
}) {
  return (
    <>
      {fields.map((field) => {
        const id = `arg-${field.name}`;
        const help = typeof field.schema.description === 'string' ? field.schema.description : undefined;
        const problem = problems[field.name];
        const described = [help && `${id}-help`, problem && `${id}-problem`].filter(Boolean).join(' ') || undefined;
        const common = {
          id,
          name: field.name,
          'aria-describedby': described,
          'aria-invalid': problem ? true : undefined,
          'aria-required': field.required || undefined,
          onChange: (event: ChangeEvent<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>) =>
            onChange(field.name, event.target.value),
        };
        return (
          <div className="field" key={field.name}>
            <label htmlFor={id}>
              {field.name} <span className="type">({typeLabel(field)})</span>
              {field.required && <span className="required"> required</span>}
            </label>
            {control(field, values[field.name] ?? '', common)}
            {help && (
              <p className="help" id={`${id}-help`}>
                {help}
              </p>
            )}
            {problem && (
              <p className="error" id={`${id}-problem`}>
                {problem}
              </p>
            )}
          </div>
        );
      })}
    </>
  );
}

function typeLabel(field: Field): string {
  if (field.kind === 'json') return 'JSON';
  if (field.kind === 'enum') return 'one of';
  return field.kind;
}

function control(field: Field, value: string, common: Record<string, unknown>) {
  const schema = field.schema;
  switch (field.kind) {
    case 'string':
      return <input type="text" value={value} {...common} />;
    case 'number':
    case 'integer':
      return (
        <input
          type="number"
          inputMode={field.kind === 'integer' ? 'numeric' : 'decimal'}
          step={field.kind === 'integer' ? 1 : 'any'}
          min={typeof schema.minimum === 'number' ? schema.minimum : undefined}
          max={typeof schema.maximum === 'number' ? schema.maximum : undefined}
          value={value}
          {...common}
        />
      );
    case 'boolean':
      return (
        <select value={value} {...common}>
          <option value="">{field.required ? 'choose' : '(not sent)'}</option>
          <option value="true">true</option>
          <option value="false">false</option>
        </select>
      );
    case 'enum':
      return (
        <select value={value} {...common}>
          <option value="">{field.required ? 'choose' : '(not sent)'}</option>
          {field.options!.map((option, i) => (
            <option key={i} value={String(i)}>
              {JSON.stringify(option)}
            </option>
          ))}
        </select>
      );
    default:
      return <textarea rows={4} spellCheck={false} value={value} {...common} />;
  }
}
