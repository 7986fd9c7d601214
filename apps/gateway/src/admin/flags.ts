import { InvalidRequestError } from '@mcpgw/contracts';
import type { Parsed } from './commands';

/** Flags of an admin command: required ones say which is missing. */
export function requireFlag(flags: Parsed['flags'], name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') throw new InvalidRequestError(`--${name} <value> is required`);
  return value;
}

export function optionalFlag(flags: Parsed['flags'], name: string): string | undefined {
  const value = flags[name];
  return typeof value === 'string' ? value : undefined;
}
