/** Tools by claim value: `*` stands for every tool. */
export type ToolsByClaim = Map<string, readonly string[]>;

const ALL = '*';

/**
 * OAUTH_TOOLS_BY_CLAIM: `value=tool,tool;value=*`, entries separated by `;`,
 * the value before the first `=`. Throws saying what is wrong.
 */
export function parseToolsByClaim(text: string): ToolsByClaim {
  const map: ToolsByClaim = new Map();
  for (const entry of text
    .split(';')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const at = entry.indexOf('=');
    const value = entry.slice(0, at).trim();
    const tools = entry
      .slice(at + 1)
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    if (at <= 0 || !value) throw new Error(`OAUTH_TOOLS_BY_CLAIM: "${entry}" is not value=tool,tool`);
    if (tools.length === 0) throw new Error(`OAUTH_TOOLS_BY_CLAIM: "${value}" names no tools (use * for all)`);
    if (map.has(value)) throw new Error(`OAUTH_TOOLS_BY_CLAIM: "${value}" is given twice`);
    map.set(value, tools);
  }
  return map;
}

/**
 * The tools a caller may see and call, from its claim's values (a list, or a
 * space-separated string as `scope` is): undefined for every tool.
 */
export function toolsOf(map: ToolsByClaim, claim: unknown): readonly string[] | undefined {
  const values =
    typeof claim === 'string'
      ? claim.split(' ')
      : Array.isArray(claim)
        ? claim.filter((v): v is string => typeof v === 'string')
        : [];
  const tools = new Set<string>();
  for (const value of values) {
    for (const tool of map.get(value) ?? []) {
      if (tool === ALL) return undefined;
      tools.add(tool);
    }
  }
  return [...tools];
}
