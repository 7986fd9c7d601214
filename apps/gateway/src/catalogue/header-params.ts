/**
 * `x-mcp-header` (MCP 2026-07-28, SEP-2243): a tool's input schema may mark a
 * parameter to be mirrored into an `Mcp-Param-{Name}` HTTP header. The
 * annotations are agent input, so they are checked once, at registration (and
 * at catalogue load), against the spec's constraints; the call path then only
 * reads the parsed list (`mcp/transport/param-headers.ts` compares headers and
 * body).
 */
export interface HeaderParam {
  /** What follows `Mcp-Param-`, as the agent wrote it (header names compare case-insensitively). */
  name: string;
  /** The chain of `properties` keys from the schema root to the parameter. */
  path: string[];
  type: 'string' | 'integer' | 'boolean';
}

const ANNOTATION = 'x-mcp-header';
/** RFC 9110 field-name token: 1*tchar. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PRIMITIVE = new Set(['string', 'integer', 'boolean']);

/**
 * The header-mapped parameters of an input schema, or throws naming the first
 * annotation that breaks a rule: a token name, unique (case-insensitively), on
 * a string, integer or boolean parameter reachable from the root through
 * `properties` keys only (not through items, composition, conditionals or $ref).
 */
export function headerParamsOf(schema: Record<string, unknown>): HeaderParam[] {
  const params: HeaderParam[] = [];
  const reachable = new Set<unknown>();
  // The statically reachable property schemas: a chain of `properties` keys.
  const stack: { node: Record<string, unknown>; path: string[] }[] = [{ node: schema, path: [] }];
  while (stack.length) {
    const { node, path } = stack.pop()!;
    const properties = node.properties;
    if (!isObject(properties)) continue;
    for (const [key, child] of Object.entries(properties)) {
      if (!isObject(child)) continue;
      reachable.add(child);
      const at = [...path, key];
      if (child[ANNOTATION] !== undefined) params.push(annotated(child, at));
      stack.push({ node: child, path: at });
    }
  }
  // Any annotation elsewhere makes the tool definition invalid.
  const walk: unknown[] = [schema];
  while (walk.length) {
    const value = walk.pop();
    if (!isObject(value) && !Array.isArray(value)) continue;
    if (isObject(value) && value[ANNOTATION] !== undefined && !reachable.has(value)) {
      throw new Error(`${ANNOTATION} is allowed only on a parameter reached through "properties" from the schema root`);
    }
    walk.push(...(Array.isArray(value) ? value : Object.values(value)));
  }
  const seen = new Set<string>();
  for (const param of params) {
    const folded = param.name.toLowerCase();
    if (seen.has(folded))
      throw new Error(`${ANNOTATION} "${param.name}" is used twice (names compare case-insensitively)`);
    seen.add(folded);
  }
  return params;
}

function annotated(property: Record<string, unknown>, path: string[]): HeaderParam {
  const name = property[ANNOTATION];
  const where = `${ANNOTATION} on /${path.join('/')}`;
  if (typeof name !== 'string' || !TOKEN.test(name)) {
    throw new Error(
      `${where} must be a non-empty HTTP header name token (RFC 9110: letters, digits, !#$%&'*+-.^_\`|~)`,
    );
  }
  const type = property.type;
  if (typeof type !== 'string' || !PRIMITIVE.has(type)) {
    throw new Error(`${where}: the parameter's type must be string, integer or boolean`);
  }
  return { name, path, type: type as HeaderParam['type'] };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
