import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';

/**
 * Validation by a class's class-validator decorators: for contract classes that
 * have no compiled schema (see schemas.ts), e.g. agent registration. Slow; not
 * for per-message use. `plain` must be a non-array object.
 */
export function validateByDecorators<T extends object>(
  cls: ClassConstructor<T>,
  plain: object,
): { ok: true; value: T } | { ok: false; errors: string[] } {
  const value = plainToInstance(cls, plain);
  const errors = flatten(validateSync(value, { forbidUnknownValues: true }));
  return errors.length ? { ok: false, errors } : { ok: true, value };
}

function flatten(errors: ValidationError[], path = ''): string[] {
  return errors.flatMap((error) => {
    const at = path ? `${path}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => `${at}: ${message}`);
    return [...own, ...flatten(error.children ?? [], at)];
  });
}
