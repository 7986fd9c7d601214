/** Where a client puts the key: `arguments.idempotency_key` of tools/call. */
export const IDEMPOTENCY_ARGUMENT = 'idempotency_key';

const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

export type KeyedArguments =
  { ok: true; key?: string; arguments: Record<string, unknown> } | { ok: false; problem: string };

/** Take the idempotency key out of the arguments (the tool never sees it) and check it. */
export function takeIdempotencyKey(args: Record<string, unknown>): KeyedArguments {
  if (!(IDEMPOTENCY_ARGUMENT in args)) return { ok: true, arguments: args };
  const { [IDEMPOTENCY_ARGUMENT]: key, ...rest } = args;
  if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
    return { ok: false, problem: `${IDEMPOTENCY_ARGUMENT} must be a string of 1-255 printable ASCII characters` };
  }
  return { ok: true, key, arguments: rest };
}
