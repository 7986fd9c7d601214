import { canonicalJson } from '../idempotency/fingerprint';
import { validatorCompiler, type ArgumentsValidator } from './tool-validator';
import type { SchemaLimits } from './schema-limits';

/** Distinct schemas kept compiled per process (each a few KiB to a few hundred). */
const CAPACITY = 10_000;

/**
 * Compiled argument validators by schema text, process-wide: a schema is
 * compiled once however many agents register it, and a registration's check
 * compiles what the catalogue then uses. A compiler (an Ajv instance, about
 * 20 ms of CPU to make) costs more than most schemas it compiles: a thousand
 * agents starting at once with one `echo` skill each spent 23 s of the
 * gateway's event loop on compilers, past their registration timeouts, and
 * their retries kept it there (issue 26, `npm run bench:agents`). The misses of
 * one batch (an agent's tools) share one compiler, as before: schemas of
 * different agents never share an Ajv instance, so no agent's `$id` can
 * collide with another's. Least recently used schemas leave past CAPACITY.
 */
export class ValidatorCache {
  private readonly entries = new Map<string, ArgumentsValidator>();

  constructor(
    private readonly limits: SchemaLimits,
    private readonly capacity = CAPACITY,
  ) {}

  /**
   * One validator per schema, in order, or the Error that schema's compile
   * threw (an invalid schema is not kept). Never throws.
   */
  compileEach(schemas: Record<string, unknown>[]): (ArgumentsValidator | Error)[] {
    const keys = schemas.map((schema) => canonicalJson(schema));
    const found = keys.map((key) => this.touch(key));
    if (found.every((validator) => validator !== undefined)) return found as ArgumentsValidator[];
    const compile = validatorCompiler(this.limits);
    return found.map((validator, i) => {
      if (validator) return validator;
      try {
        const compiled = compile(schemas[i]);
        this.keep(keys[i], compiled);
        return compiled;
      } catch (error) {
        return error as Error;
      }
    });
  }

  private touch(key: string): ArgumentsValidator | undefined {
    const validator = this.entries.get(key);
    if (validator) {
      this.entries.delete(key);
      this.entries.set(key, validator);
    }
    return validator;
  }

  private keep(key: string, validator: ArgumentsValidator): void {
    this.entries.set(key, validator);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}

const caches = new Map<string, ValidatorCache>();

/** The process's cache for these limits (the gateway has one set; tests may use others). */
export function validatorCache(limits: SchemaLimits): ValidatorCache {
  const key = canonicalJson(limits as unknown as Record<string, unknown>);
  let cache = caches.get(key);
  if (!cache) caches.set(key, (cache = new ValidatorCache(limits)));
  return cache;
}
