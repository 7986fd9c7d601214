import type { SkillDefinition } from '@mcpgw/contracts';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../idempotency/fingerprint';

/** What an agent may do to its approved tool definitions (`TOOL_CHANGES`, `agent update --tool-changes`). */
export const TOOL_CHANGE_POLICIES = ['accept', 'hold', 'reject'] as const;
export type ToolChangePolicy = (typeof TOOL_CHANGE_POLICIES)[number];

/**
 * A tool definition's digest: SHA-256 of its canonical JSON, every field the
 * agent registered (name, title, description, schemas, annotations, side
 * effects, credentials, execution, `_meta`). Key order does not count.
 */
export function definitionDigest(definition: SkillDefinition): string {
  return createHash('sha256').update(canonicalJson(definition)).digest('hex');
}

/** A proposal's digest: the same set of definitions, in any order, is the same proposal. */
export function proposalDigest(definitions: SkillDefinition[]): string {
  const digests = definitions.map(definitionDigest).sort();
  return createHash('sha256').update(digests.join('\n')).digest('hex');
}

/** How a registration differs from the approved catalogue, by tool name. */
export interface CatalogueDiff {
  unchanged: SkillDefinition[];
  /** Approved under this name, registered now with another definition. */
  changed: { approved: SkillDefinition; registered: SkillDefinition }[];
  /** Registered now, not approved under this name. */
  added: SkillDefinition[];
  /** Approved, not registered now: they go at once (removal is safe). */
  removed: SkillDefinition[];
}

export function diffCatalogue(approved: SkillDefinition[], registered: SkillDefinition[]): CatalogueDiff {
  const byName = new Map(approved.map((definition) => [definition.name, definition]));
  const diff: CatalogueDiff = { unchanged: [], changed: [], added: [], removed: [] };
  const names = new Set<string>();
  for (const definition of registered) {
    names.add(definition.name);
    const before = byName.get(definition.name);
    if (!before) diff.added.push(definition);
    else if (definitionDigest(before) === definitionDigest(definition)) diff.unchanged.push(before);
    else diff.changed.push({ approved: before, registered: definition });
  }
  diff.removed = approved.filter((definition) => !names.has(definition.name));
  return diff;
}

/** What a registration leads to under a policy. */
export type Admission =
  /** `served`: the definitions clients see and calls are checked against from now on. */
  { ok: true; served: SkillDefinition[]; proposal?: SkillDefinition[] } | { ok: false; reason: string };

/**
 * The rule (README.md here). `accept`: the registration is served as it is.
 * `hold`: approved definitions stay served, new and changed tools wait as one
 * proposal for an operator; removed tools go at once. `reject`: a registration
 * that adds or changes a tool is refused, with the names; one that only
 * removes tools is served.
 */
export function admit(policy: ToolChangePolicy, diff: CatalogueDiff): Admission {
  const waiting = [...diff.changed.map((change) => change.registered), ...diff.added];
  const registered = [...diff.unchanged, ...waiting];
  if (waiting.length === 0 || policy === 'accept') return { ok: true, served: registered };
  if (policy === 'reject') {
    const names = [
      ...diff.changed.map((change) => `${change.registered.name} (changed)`),
      ...diff.added.map((definition) => `${definition.name} (new)`),
    ];
    return {
      ok: false,
      reason: `tool definitions differ from the approved ones and this agent's tool-change policy is reject: ${names.join(', ')}`,
    };
  }
  return {
    ok: true,
    served: [...diff.unchanged, ...diff.changed.map((change) => change.approved)],
    proposal: waiting,
  };
}
