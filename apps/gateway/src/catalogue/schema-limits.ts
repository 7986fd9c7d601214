/** What a schema from an agent may be, and how long a string its patterns may test. */
export interface SchemaLimits {
  /** Bytes of the schema as JSON. */
  maxBytes: number;
  /** Nesting of JSON objects and arrays (the schema object itself is 1). */
  maxDepth: number;
  /** Characters of a string (or property name) tested against a pattern. */
  maxPatternInputChars: number;
}

export const DEFAULT_SCHEMA_LIMITS: SchemaLimits = {
  maxBytes: 65_536,
  maxDepth: 64,
  maxPatternInputChars: 65_536,
};

/** The limits from the gateway's settings (`SCHEMA_MAX_BYTES`, `SCHEMA_MAX_DEPTH`, `SCHEMA_PATTERN_INPUT_MAX_CHARS`). */
export function schemaLimitsFrom(env: {
  SCHEMA_MAX_BYTES: number;
  SCHEMA_MAX_DEPTH: number;
  SCHEMA_PATTERN_INPUT_MAX_CHARS: number;
}): SchemaLimits {
  return {
    maxBytes: env.SCHEMA_MAX_BYTES,
    maxDepth: env.SCHEMA_MAX_DEPTH,
    maxPatternInputChars: env.SCHEMA_PATTERN_INPUT_MAX_CHARS,
  };
}

/**
 * Refuses, before ajv sees it, a schema that is too big or too deep, or that
 * refers to anything outside itself: a `$ref` / `$dynamicRef` must be a
 * fragment (`#...`). ajv has no `loadSchema`, so it could never fetch one;
 * this says so at registration, naming the reference. Throws with the reason.
 */
export function checkSchemaLimits(schema: unknown, limits: SchemaLimits): void {
  const bytes = Buffer.byteLength(JSON.stringify(schema) ?? '', 'utf8');
  if (bytes > limits.maxBytes) {
    throw new Error(`the schema is ${bytes} bytes of JSON, more than the ${limits.maxBytes} allowed`);
  }
  // Iterative walk: a deep schema must not overflow the stack before it is refused.
  const stack: { value: unknown; depth: number }[] = [{ value: schema, depth: 1 }];
  while (stack.length) {
    const { value, depth } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > limits.maxDepth) {
      throw new Error(`the schema nests deeper than the ${limits.maxDepth} levels allowed`);
    }
    if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, depth: depth + 1 });
      continue;
    }
    for (const [key, child] of Object.entries(value)) {
      if ((key === '$ref' || key === '$dynamicRef') && typeof child === 'string' && !child.startsWith('#')) {
        throw new Error(`${key} ${JSON.stringify(child)} is not local: only references within the schema (#...)`);
      }
      stack.push({ value: child, depth: depth + 1 });
    }
  }
}
