const encoder = new TextEncoder();
const decoder = new TextDecoder();

declare const encodedOf: unique symbol;

/**
 * The JSON bytes of a `T`: what `encodeJson` makes, or what a subscriber got
 * after its payload passed the subject's check. Publishing one sends the bytes
 * as they are, with no second stringify.
 */
export type Encoded<T> = Uint8Array & { readonly [encodedOf]: T };

export function encodeJson<T>(value: T): Encoded<T> {
  return encoder.encode(JSON.stringify(value)) as Encoded<T>;
}

/** Decode a JSON payload; undefined when it is not JSON. */
export function decodeJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(data));
  } catch {
    return undefined;
  }
}
