import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validateSync } from 'class-validator';

type Instances<T extends ClassConstructor<object>[]> = T extends [infer H, ...infer R]
  ? (H extends ClassConstructor<infer I> ? I : never) & (R extends ClassConstructor<object>[] ? Instances<R> : unknown)
  : unknown;

export class EnvValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

/**
 * Validate the environment against one small class per dependency (NATS,
 * database, HTTP, the app's own settings) and merge them. Defaults are the
 * classes' property initialisers; numbers and booleans are converted.
 * Throws EnvValidationError naming every bad variable, so an app refuses to
 * start with a clear message instead of failing later.
 */
export function validateEnv<T extends ClassConstructor<object>[]>(
  env: Record<string, unknown>,
  ...classes: T
): Instances<T> {
  const problems: string[] = [];
  const merged: Record<string, unknown> = {};
  for (const cls of classes) {
    const instance = plainToInstance(cls, stripEmpty(env), {
      enableImplicitConversion: true,
      excludeExtraneousValues: false,
    });
    for (const error of validateSync(instance, { skipMissingProperties: false })) {
      const value = env[error.property];
      const shown = /SECRET|KEY|PASSWORD|TOKEN/i.test(error.property)
        ? '<hidden>'
        : JSON.stringify(value)?.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
      problems.push(`${error.property}=${shown}: ${Object.values(error.constraints ?? {}).join('; ')}`);
    }
    for (const key of Object.keys(new cls())) merged[key] = (instance as Record<string, unknown>)[key];
  }
  if (problems.length) throw new EnvValidationError(problems);
  return merged as Instances<T>;
}

function stripEmpty(env: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(env).filter(([, value]) => value !== '' && value !== undefined));
}
