/**
 * The deepest nesting of arrays and objects a request body to an MCP endpoint may
 * have. JSON.parse takes any depth, but much of what a body goes through after it
 * recurses (JSON.stringify on the way to the bus, the idempotency fingerprint,
 * schema validation): 100,000 levels overflowed the stack and answered 500. No
 * JSON-RPC request needs more; deeper bodies are refused with 400 -32600 before
 * anything else looks at them, as a body over MCP_MAX_BODY_BYTES is (413 -32600).
 */
export const MAX_JSON_DEPTH = 256;

/** Whether JSON text nests arrays and objects deeper than `max`: one pass over the text, no recursion. */
export function jsonDeeperThan(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

export const TOO_DEEP_MESSAGE = `the body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`;
