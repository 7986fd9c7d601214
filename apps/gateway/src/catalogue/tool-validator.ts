import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * JSON Schema validation of tool arguments (draft 2020-12, MCP's default
 * dialect). Defaults from the schema are filled in, so the agent sees them.
 */
export type ArgumentsValidator = (args: Record<string, unknown>) => string[];

/**
 * A compiler for one agent's schemas. Each catalogue load (and each
 * registration check) gets its own Ajv instance: Ajv keeps every compiled
 * schema, and refuses a second schema with the same `$id`, so a shared one
 * would grow forever and break agents whose schemas carry ids.
 */
export function validatorCompiler(): (schema: Record<string, unknown>) => ArgumentsValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: true, useDefaults: true, coerceTypes: false });
  addFormats(ajv);
  return (schema) => {
    const { $schema: _ignored, ...body } = schema;
    const validate: ValidateFunction = ajv.compile(body);
    return (args) => (validate(args) ? [] : describe(validate.errors ?? []));
  };
}

/** Compile one schema on its own; throws with the reason when the schema itself is invalid. */
export function compileArgumentsValidator(schema: Record<string, unknown>): ArgumentsValidator {
  return validatorCompiler()(schema);
}

function describe(errors: ErrorObject[]): string[] {
  return errors.map((error) => `${error.instancePath || '(arguments)'} ${error.message ?? 'is invalid'}`.trim());
}
