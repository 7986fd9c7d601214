import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The performance figures of docs/performance.md and the README are docs/benchmarks.md's
 * newest recorded runs:
 *
 * - docs/benchmarks.md holds them in one marked block ("The newest figures"), a table
 *   with a row per run, each row naming the `## ` section that records the run;
 * - docs/performance.md reproduces that block verbatim;
 * - every figure a row quotes is a figure of its own section (a number that section does
 *   not hold, such as a figure of an older run, fails);
 * - the newest run recorded (the last `## ` section whose heading carries a date; the
 *   document is appended in order, which the dates confirm) has a row;
 * - the README's "## Performance" quotes runs' ratios only as bullets `- **<run>**, …`,
 *   each naming a row of the block, each figure a figure of that run's section, and one
 *   of them the newest run.
 *
 * So recording a run without updating the block, updating the block without
 * docs/performance.md, or leaving the README on an older run fails here. Controls feed
 * altered copies of the documents to the same checks.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const BEGIN = '<!-- newest-figures:begin -->';
const END = '<!-- newest-figures:end -->';

function markedBlock(text: string, name: string): string {
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${name} has no ${BEGIN} … ${END} block`);
  if (text.indexOf(BEGIN, begin + 1) >= 0) throw new Error(`${name} has two ${BEGIN} blocks`);
  return text.slice(begin, end + END.length);
}

interface Section {
  /** The heading up to its colon: "Stop 14", "Issue 27". */
  name: string;
  heading: string;
  /** Its heading and body, up to the next `## `. */
  text: string;
  /** The date in its heading's parentheses, if any. */
  date?: string;
}

function sections(doc: string): Section[] {
  return doc
    .split(/^(?=## )/m)
    .filter((part) => part.startsWith('## '))
    .map((text) => {
      const heading = text.slice(3, text.indexOf('\n')).trim();
      return {
        name: heading.split(':')[0].trim(),
        heading,
        text,
        date: /\([^)]*?(\d{4}-\d{2}-\d{2})[^)]*\)\s*$/.exec(heading)?.[1],
      };
    });
}

/**
 * The figures of a text: numbers as written (thousands separators, decimals, a ratio's
 * `x`), not the digits inside names such as b1, a2 or 2x2's second 2.
 */
function figures(text: string): string[] {
  return [...text.matchAll(/(?<![A-Za-z0-9_.,])\d+(?:,\d{3})*(?:\.\d+)?(?:x(?![A-Za-z0-9]))?/g)].map((m) => m[0]);
}

/** The block's table rows: the run's name, and its other cells (conditions, then figures). */
function rows(block: string): { run: string; rest: string; cells: string[] }[] {
  return block
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| run |'))
    .map((line) => {
      const cells = line.split('|').slice(1, -1);
      return { run: cells[0].trim(), rest: cells.slice(1).join('|'), cells };
    });
}

/** Everything wrong with the two documents (empty: the page quotes the newest runs). */
function problems(page: string, benchmarks: string): string[] {
  const found: string[] = [];
  let block: string;
  try {
    block = markedBlock(benchmarks, 'docs/benchmarks.md');
  } catch (error) {
    return [(error as Error).message];
  }
  try {
    if (markedBlock(page, 'docs/performance.md') !== block)
      found.push("docs/performance.md's newest-figures block differs from docs/benchmarks.md's: copy it over verbatim");
  } catch (error) {
    found.push((error as Error).message);
  }

  const all = sections(benchmarks);
  const dated = all.filter((s) => s.date);
  for (let i = 1; i < dated.length; i++)
    if (dated[i].date! < dated[i - 1].date!)
      found.push(`docs/benchmarks.md: "${dated[i].heading}" comes after a later run; record runs in order`);
  const table = rows(block);
  if (!table.length) found.push('the newest-figures block has no rows');
  for (const { run, rest } of table) {
    const section = all.find((s) => s.name === run);
    if (!section) {
      found.push(`row "${run}": no "## ${run}: …" section in docs/benchmarks.md`);
      continue;
    }
    const held = new Set(figures(section.text));
    const foreign = figures(rest).filter((f) => !held.has(f));
    if (foreign.length) found.push(`row "${run}": ${foreign.join(', ')} not in the section "${section.heading}"`);
  }
  const newest = dated.at(-1);
  if (newest && !table.some((r) => r.run === newest.name))
    found.push(`the newest recorded run, "${newest.heading}", has no row in the newest-figures block`);
  return found;
}

/** The README's bullets under "## Performance": `- **<run>**, …` with their text (continuation lines joined). */
function readmeBullets(readme: string): { run: string; text: string }[] {
  const section = readme.split(/^## Performance$/m)[1]?.split(/^## /m)[0] ?? '';
  return section
    .split(/^(?=- )/m)
    .filter((part) => part.startsWith('- **'))
    .map((part) => {
      const text = part.split(/\n\n/)[0].replace(/\s+/g, ' ').trim();
      return { run: /^- \*\*([^*]+)\*\*/.exec(text)![1], text: text.replace(/^- \*\*[^*]+\*\*/, '') };
    });
}

/** Everything wrong with the README's ratios (empty: each a figure of its run, the newest run quoted). */
function readmeProblems(readme: string, benchmarks: string): string[] {
  const found: string[] = [];
  const bullets = readmeBullets(readme);
  if (!bullets.length) return ['README.md quotes no run under "## Performance" (bullets "- **<run>**, …")'];
  const table = rows(markedBlock(benchmarks, 'docs/benchmarks.md'));
  const all = sections(benchmarks);
  for (const { run, text } of bullets) {
    if (!table.some((r) => r.run === run)) {
      found.push(`README.md quotes "${run}", which has no row in the newest-figures block`);
      continue;
    }
    const section = all.find((s) => s.name === run)!;
    const held = new Set(figures(section.text));
    const foreign = figures(text).filter((f) => !held.has(f));
    if (foreign.length)
      found.push(`README.md, "${run}": ${foreign.join(', ')} not in the section "${section.heading}"`);
  }
  const newest = all.filter((s) => s.date).at(-1);
  if (newest && !bullets.some((b) => b.run === newest.name))
    found.push(`README.md does not quote the newest recorded run, "${newest.heading}"`);
  return found;
}

const readme = readFileSync(join(root, 'README.md'), 'utf8');
const performance = readFileSync(join(root, 'docs/performance.md'), 'utf8');
const benchmarks = readFileSync(join(root, 'docs/benchmarks.md'), 'utf8');

describe('the performance figures of docs/performance.md and the README', () => {
  it("are docs/benchmarks.md's newest-figures block, verbatim, each figure from its run's section, the newest run included", () => {
    expect(problems(performance, benchmarks)).toEqual([]);
  });

  it("the README quotes runs of the block, each figure from its run's section, the newest run among them", () => {
    expect(readmeBullets(readme).length).toBeGreaterThanOrEqual(1);
    expect(readmeProblems(readme, benchmarks)).toEqual([]);
  });

  it('come as rows naming their runs, and figures are read as written (b1 and 2x2 are names, not figures)', () => {
    const names = rows(markedBlock(benchmarks, 'docs/benchmarks.md')).map((r) => r.run);
    expect(names.length).toBeGreaterThanOrEqual(2);
    expect(figures('2,410 calls/s, p99 52.3 ms; 1.14x b1, 2x2 0.60x')).toEqual([
      '2,410',
      '52.3',
      '1.14x',
      '2',
      '0.60x',
    ]);
  });

  describe('controls: altered copies fail', () => {
    const block = markedBlock(benchmarks, 'docs/benchmarks.md');
    /** A page that quotes the block, whatever the real one holds: the controls test the check, not the page. */
    const quoting = `# Performance\n\n${block}\n`;
    const firstRow = rows(block)[0];
    /** The row's first figure of the stack at 64 clients (its calls/s). */
    const callsPerSecond = figures(firstRow.cells[2])[0];

    it('(the unaltered block, quoted, passes)', () => {
      expect(problems(quoting, benchmarks)).toEqual([]);
    });

    it('a page whose table differs by one figure', () => {
      const altered = quoting.replace(block, block.replace(callsPerSecond, `${callsPerSecond}1`));
      expect(problems(altered, benchmarks)).toEqual([expect.stringContaining('differs from docs/benchmarks.md')]);
    });

    it('a page without the block', () => {
      expect(problems(quoting.replace(block, ''), benchmarks)).toEqual([
        expect.stringContaining('docs/performance.md has no'),
      ]);
    });

    it("a README bullet with a figure its run's section does not hold, or naming no row", () => {
      expect(readmeProblems(readme, benchmarks)).toEqual([]);
      const [first] = readmeBullets(readme);
      const [ratio] = figures(first.text).filter((f) => f.endsWith('x'));
      const altered = readme.replace(`- **${first.run}**`, `- **${first.run}**, 9.99x`);
      expect(readmeProblems(altered, benchmarks)).toEqual([expect.stringContaining(`"${first.run}": 9.99x not in`)]);
      expect(ratio).toBeDefined();
      const renamed = readme.replace(`- **${first.run}**`, '- **Stop 99**');
      expect(readmeProblems(renamed, benchmarks)).toContainEqual(
        expect.stringContaining('"Stop 99", which has no row'),
      );
    });

    it('a README that leaves out the newest run, or quotes none', () => {
      const newer = `${benchmarks}\n## Issue 99: another run (2099-01-01, 10:00)\n\n1,999 calls/s.\n`;
      expect(readmeProblems(readme, newer)).toEqual([
        expect.stringContaining('does not quote the newest recorded run, "Issue 99: another run'),
      ]);
      expect(readmeProblems('# README\n\n## Performance\n\nFast.\n', benchmarks)).toEqual([
        expect.stringContaining('quotes no run'),
      ]);
    });

    it("an older run's figure in a row (the README's old 1,830 calls/s)", () => {
      const stale = block.replace(callsPerSecond, '1,830');
      expect(problems(quoting.replace(block, stale), benchmarks.replace(block, stale))).toEqual([
        expect.stringContaining(`row "${firstRow.run}": 1,830 not in the section`),
      ]);
    });

    it('a newer run recorded without a row', () => {
      const newer = `${benchmarks}\n## Issue 99: another run (2099-01-01, 10:00)\n\n1,999 calls/s.\n`;
      expect(problems(quoting, newer)).toEqual([
        expect.stringContaining('"Issue 99: another run (2099-01-01, 10:00)", has no row'),
      ]);
    });

    it('a run recorded out of order, and a row naming no section', () => {
      const early = `${benchmarks}\n## Stop 0: a late entry (2020-01-01)\n`;
      expect(problems(quoting, early)).toContainEqual(expect.stringContaining('comes after a later run'));
      const renamed = block.replace(`| ${firstRow.run} |`, '| Stop 99 |');
      expect(problems(quoting.replace(block, renamed), benchmarks.replace(block, renamed))).toContainEqual(
        expect.stringContaining('row "Stop 99": no "## Stop 99: …" section'),
      );
    });
  });
});
