/**
 * A line diff for the tool-changes page: the approved and the proposed text of
 * a tool's definition, side by side, each line kept, removed or added. Longest
 * common subsequence of lines (the definitions are short); past MAX_LINES a
 * side, every line counts as changed rather than spending quadratic time.
 */
export const MAX_LINES = 2_000;

export type LineKind = 'same' | 'removed' | 'added';

export interface DiffLine {
  kind: LineKind;
  text: string;
}

/** One row of the side-by-side view: the approved line on the left, the proposed one on the right (absent: a gap). */
export interface DiffRow {
  left?: DiffLine;
  right?: DiffLine;
}

/** The lines of `after` against those of `before`, in order: kept, removed (from before) and added (in after). */
export function diffLines(before: string[], after: string[]): DiffLine[] {
  if (before.length > MAX_LINES || after.length > MAX_LINES) {
    return [...before.map((text) => line('removed', text)), ...after.map((text) => line('added', text))];
  }
  // common[i][j]: the longest common subsequence of before[i..] and after[j..].
  const common = Array.from({ length: before.length + 1 }, () => new Uint16Array(after.length + 1));
  for (let i = before.length - 1; i >= 0; i--) {
    for (let j = after.length - 1; j >= 0; j--) {
      common[i][j] = before[i] === after[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
    }
  }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length && j < after.length) {
    if (before[i] === after[j]) {
      lines.push(line('same', before[i]));
      i++;
      j++;
    } else if (common[i + 1][j] >= common[i][j + 1]) {
      lines.push(line('removed', before[i++]));
    } else {
      lines.push(line('added', after[j++]));
    }
  }
  while (i < before.length) lines.push(line('removed', before[i++]));
  while (j < after.length) lines.push(line('added', after[j++]));
  return lines;
}

/**
 * The diff as rows side by side: a kept line on both sides; a run of removed
 * lines beside the run of added lines that follows it (a changed line reads
 * across), the longer run facing gaps.
 */
export function sideBySide(lines: DiffLine[]): DiffRow[] {
  const rows: DiffRow[] = [];
  let at = 0;
  while (at < lines.length) {
    if (lines[at].kind === 'same') {
      rows.push({ left: lines[at], right: lines[at] });
      at++;
      continue;
    }
    const removed: DiffLine[] = [];
    const added: DiffLine[] = [];
    while (at < lines.length && lines[at].kind === 'removed') removed.push(lines[at++]);
    while (at < lines.length && lines[at].kind === 'added') added.push(lines[at++]);
    for (let k = 0; k < Math.max(removed.length, added.length); k++) rows.push({ left: removed[k], right: added[k] });
  }
  return rows;
}

/** A JSON value as lines, its object keys sorted (a reordering is no change), two spaces a level. */
export function jsonLines(value: unknown): string[] {
  if (value === undefined) return [];
  return JSON.stringify(sortedKeys(value), null, 2).split('\n');
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]),
  );
}

const line = (kind: LineKind, text: string): DiffLine => ({ kind, text });
