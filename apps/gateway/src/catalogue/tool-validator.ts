import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * JSON Schema validation of tool arguments (draft 2020-12, MCP's default
 * dialect). Defaults from the schema are filled in, so the agent sees them.
 */
const ajv = new Ajv2020({ strict: false, allErrors: true, useDefaults: true, coerceTypes: false });
addFormats(ajv);

export type ArgumentsValidator = (args: Record<string, unknown>) => string[];

/** Compile a tool's input schema; throws with the reason when the schema itself is invalid. */
export function compileArgumentsValidator(schema: Record<string, unknown>): ArgumentsValidator {
  const { $schema: _ignored, ...body } = schema;
  const validate: ValidateFunction = ajv.compile(body);
  return (args) => (validate(args) ? [] : describe(validate.errors ?? []));
}

function describe(errors: ErrorObject[]): string[] {
  return errors.map((error) => `${error.instancePath || '(arguments)'} ${error.message ?? 'is invalid'}`.trim());
}
