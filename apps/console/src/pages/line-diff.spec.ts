import { describe, expect, it } from 'vitest';
import { MAX_LINES, diffLines, jsonLines, sideBySide } from './line-diff';

const kinds = (before: string[], after: string[]) =>
  diffLines(before, after).map((line) => `${{ same: ' ', removed: '-', added: '+' }[line.kind]}${line.text}`);

describe("the tool-changes page's line diff", () => {
  it('keeps the common lines and marks the others removed or added, in order', () => {
    expect(kinds(['a', 'b', 'c', 'd'], ['a', 'x', 'c', 'd', 'e'])).toEqual([' a', '-b', '+x', ' c', ' d', '+e']);
    expect(kinds([], ['new'])).toEqual(['+new']);
    expect(kinds(['gone'], [])).toEqual(['-gone']);
    expect(kinds(['same'], ['same'])).toEqual([' same']);
  });

  it('puts a changed line across from its replacement, and a longer run against gaps', () => {
    const rows = sideBySide(diffLines(['a', 'b', 'c'], ['a', 'B', 'B2', 'c']));
    expect(rows.map((row) => [row.left?.text ?? null, row.right?.text ?? null])).toEqual([
      ['a', 'a'],
      ['b', 'B'],
      [null, 'B2'],
      ['c', 'c'],
    ]);
    expect(rows[1]).toEqual({ left: { kind: 'removed', text: 'b' }, right: { kind: 'added', text: 'B' } });
  });

  it('shows a schema with its keys sorted: a reordering is no change, a new property is one', () => {
    const before = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
    const reordered = { required: ['text'], properties: { text: { type: 'string' } }, type: 'object' };
    expect(diffLines(jsonLines(before), jsonLines(reordered)).every((line) => line.kind === 'same')).toBe(true);
    const grown = { ...before, properties: { ...before.properties, to: { type: 'string' } } };
    const changed = diffLines(jsonLines(before), jsonLines(grown)).filter((line) => line.kind !== 'same');
    // `text` gains a comma after its closing brace, then `to` comes (its own closing brace kept from `text`'s).
    expect(changed.map((line) => `${line.kind} ${line.text.trim()}`)).toEqual([
      'added },',
      'added "to": {',
      'added "type": "string"',
    ]);
    expect(jsonLines(undefined)).toEqual([]);
  });

  it('past MAX_LINES a side, every line counts as changed (no quadratic table)', () => {
    const long = Array.from({ length: MAX_LINES + 1 }, (_, i) => `line ${i}`);
    const lines = diffLines(long, long);
    expect(lines).toHaveLength(2 * (MAX_LINES + 1));
    expect(lines.filter((line) => line.kind === 'same')).toEqual([]);
  });
});
