import type { SkillDefinition } from '@mcpgw/contracts';
import { canonicalJson } from '../idempotency/fingerprint';

/** One difference inside a definition: a JSON Pointer into it, the value before and after (absent: none). */
export interface DefinitionChange {
  path: string;
  before?: unknown;
  after?: unknown;
}

/** What one tool of a proposal changes, for the operator to read before approving. */
export interface ToolDiff {
  tool: string;
  kind: 'new' | 'changed';
  changes: DefinitionChange[];
}

/**
 * The proposal against the approved definitions, tool by tool: every leaf
 * that differs, by its JSON Pointer (`/description`,
 * `/input_schema/properties/to/type`), with both values. A new tool lists
 * each of its fields as added.
 */
export function diffProposal(proposed: SkillDefinition[], approvedBefore: SkillDefinition[]): ToolDiff[] {
  const approved = new Map(approvedBefore.map((definition) => [definition.name, definition]));
  return proposed.map((definition) => {
    const before = approved.get(definition.name);
    return {
      tool: definition.name,
      kind: before ? 'changed' : 'new',
      changes: diffValues('', before ?? {}, definition),
    };
  });
}

function diffValues(path: string, before: unknown, after: unknown): DefinitionChange[] {
  if (canonicalJson(before) === canonicalJson(after)) return [];
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => {
      const at = `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (!(key in after)) return [{ path: at, before: before[key] }];
      if (!(key in before)) return [{ path: at, after: after[key] }];
      return diffValues(at, before[key], after[key]);
    });
  }
  return [{ path: path || '/', before, after }];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The diff as text for the CLI: `~` changed, `+` added, `-` removed, one line each, values as JSON. */
export function diffText(diffs: ToolDiff[]): string {
  return diffs
    .map(({ tool, kind, changes }) =>
      [
        `  ${kind === 'new' ? '+' : '~'} tool ${tool}${kind === 'new' ? ' (new)' : ''}`,
        ...changes.map(({ path, before, after }) => {
          if (before === undefined) return `      + ${path}: ${show(after)}`;
          if (after === undefined) return `      - ${path}: ${show(before)}`;
          return `      ~ ${path}: ${show(before)} -> ${show(after)}`;
        }),
      ].join('\n'),
    )
    .join('\n');
}

function show(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}
