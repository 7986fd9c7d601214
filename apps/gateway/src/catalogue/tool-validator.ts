import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { PatternInputTooLongError, re2Engine } from './re2-engine';
import { DEFAULT_SCHEMA_LIMITS, checkSchemaLimits, type SchemaLimits } from './schema-limits';

/**
 * JSON Schema validation of tool arguments (draft 2020-12, MCP's default
 * dialect). Defaults from the schema are filled in, so the agent sees them.
 */
export type ArgumentsValidator = (args: Record<string, unknown>) => string[];

/**
 * A compiler for one agent's schemas (validator-cache.ts makes one per batch
 * of schemas it has not compiled yet). Never shared between agents: Ajv keeps
 * every compiled schema, and refuses a second schema with the same `$id`, so a
 * shared one would grow forever and break agents whose schemas carry ids.
 *
 * Schemas come from agents, so: size, depth and references are checked first
 * (`checkSchemaLimits`); `pattern` and `patternProperties` run on RE2
 * (`re2Engine`, linear time), and a pattern RE2 cannot run fails the compile;
 * ajv has no `loadSchema`, so it never fetches. See README.md.
 */
export function validatorCompiler(
  limits: SchemaLimits = DEFAULT_SCHEMA_LIMITS,
): (schema: Record<string, unknown>) => ArgumentsValidator {
  const ajv = new Ajv2020({
    strict: false,
    allErrors: true,
    useDefaults: true,
    coerceTypes: false,
    code: { regExp: re2Engine(limits.maxPatternInputChars) },
  });
  addFormats(ajv);
  return (schema) => {
    checkSchemaLimits(schema, limits);
    const { $schema: _ignored, ...body } = schema;
    const validate: ValidateFunction = ajv.compile(body);
    return (args) => {
      try {
        return validate(args) ? [] : describe(validate.errors ?? []);
      } catch (error) {
        if (error instanceof PatternInputTooLongError) return tooLong(args, error);
        throw error;
      }
    };
  };
}

/** Compile one schema on its own; throws with the reason when the schema itself is invalid. */
export function compileArgumentsValidator(
  schema: Record<string, unknown>,
  limits: SchemaLimits = DEFAULT_SCHEMA_LIMITS,
): ArgumentsValidator {
  return validatorCompiler(limits)(schema);
}

function describe(errors: ErrorObject[]): string[] {
  return errors.map((error) => `${error.instancePath || '(arguments)'} ${error.message ?? 'is invalid'}`.trim());
}

/** The over-long strings (values or property names), by path: ajv does not say which one it was testing. */
function tooLong(args: unknown, error: PatternInputTooLongError): string[] {
  const paths: string[] = [];
  // Iterative: arguments may nest deeper than the stack (only the schema's depth is capped).
  const stack: { value: unknown; path: string }[] = [{ value: args, path: '' }];
  while (stack.length && paths.length < 5) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string' && value.length > error.max) paths.push(path || '(arguments)');
    if (typeof value !== 'object' || value === null) continue;
    for (const [key, child] of Object.entries(value)) {
      if (key.length > error.max) paths.push(`${path || '(arguments)'} (a property name)`);
      // Paths stop growing past 200 characters: a deep structure must not cost quadratic time here.
      const at = path.length > 200 ? path : `${path}/${key.slice(0, 100).replace(/~/g, '~0').replace(/\//g, '~1')}`;
      stack.push({ value: child, path: at });
    }
  }
  return [`${paths.length ? `${paths.join(', ')}: ` : ''}${error.message}`];
}
