/** A plain-text table: left-aligned first column, right-aligned others. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export const fixed = (n: number | undefined, digits = 2): string =>
  n === undefined || Number.isNaN(n) ? 'n/a' : n.toFixed(digits);
export const ratio = (a: number | undefined, b: number | undefined): string =>
  a === undefined || !b ? 'n/a' : `${(a / b).toFixed(2)}x`;
