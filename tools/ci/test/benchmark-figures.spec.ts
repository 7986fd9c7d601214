import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ALL_SYSTEMS } from '../../bench/src/config';
import { currentBlockOf, currentFigures, type BenchRun } from '../../bench/src/report/current-figures';

/**
 * The performance figures of the docs and the README:
 *
 * - docs/performance.md shows the newest run of `npm run bench`, written by the bench
 *   between two markers from the run's JSON (docs/benchmarks/current.json): rendering
 *   that JSON again gives the block byte for byte, so nobody edits it by hand;
 * - the README's "## Performance" (and README.zh.md's) quotes ratios of that run only:
 *   every ratio it writes is one of the block's;
 * - docs/benchmarks.md keeps the history: dated `## ` sections appended in order, and a
 *   marked block ("The newest figures") with a row per recorded run, each row's figures
 *   figures of its own section, the newest recorded run among the rows.
 *
 * Controls feed altered copies of the documents to the same checks.
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

/** Everything wrong with the history of docs/benchmarks.md (empty: its block lists the recorded runs). */
function problems(benchmarks: string): string[] {
  const found: string[] = [];
  let block: string;
  try {
    block = markedBlock(benchmarks, 'docs/benchmarks.md');
  } catch (error) {
    return [(error as Error).message];
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

/** The ratios (figures ending in x) a README writes under its performance heading. */
function readmeRatios(readme: string, heading: string): string[] {
  const section = readme.split(new RegExp(`^## ${heading}$`, 'm'))[1]?.split(/^## /m)[0] ?? '';
  return figures(section).filter((f) => f.endsWith('x'));
}

/** Everything wrong with a README's ratios (empty: some, each one of the current run's). */
function readmeProblems(readme: string, heading: string, current: string): string[] {
  const ratios = readmeRatios(readme, heading);
  if (!ratios.length) return [`quotes no ratio under "## ${heading}"`];
  const held = new Set(figures(current));
  const foreign = ratios.filter((r) => !held.has(r));
  return foreign.length ? [`${foreign.join(', ')} not ratios of the current run (docs/performance.md)`] : [];
}

/** Everything wrong with docs/performance.md's current figures (empty: the bench's rendering of its JSON). */
function currentProblems(page: string, run: BenchRun): string[] {
  const block = currentBlockOf(page);
  if (!block) return ['docs/performance.md has no current-figures block (npm run bench writes it)'];
  return block === currentFigures(run, ALL_SYSTEMS)
    ? []
    : [
        "docs/performance.md's current figures are not the rendering of docs/benchmarks/current.json: run npm run bench",
      ];
}

const readme = readFileSync(join(root, 'README.md'), 'utf8');
const performance = readFileSync(join(root, 'docs/performance.md'), 'utf8');
const benchmarks = readFileSync(join(root, 'docs/benchmarks.md'), 'utf8');
const readmeZh = readFileSync(join(root, 'README.zh.md'), 'utf8');
const run = JSON.parse(readFileSync(join(root, 'docs/benchmarks/current.json'), 'utf8')) as BenchRun;
const current = currentBlockOf(performance) ?? '';

describe('the performance figures of docs/performance.md and the README', () => {
  it("docs/performance.md shows the newest bench run, as the bench wrote it from the run's JSON", () => {
    expect(currentProblems(performance, run)).toEqual([]);
  });

  it('the READMEs quote ratios of that run only', () => {
    expect(readmeProblems(readme, 'Performance', current)).toEqual([]);
    expect(readmeProblems(readmeZh, '性能', current)).toEqual([]);
  });

  it("docs/benchmarks.md's history: a row per recorded run, each figure from its run's section, the newest included", () => {
    expect(problems(benchmarks)).toEqual([]);
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
    const firstRow = rows(block)[0];
    /** The row's first figure of the stack at 64 clients (its calls/s). */
    const callsPerSecond = figures(firstRow.cells[2])[0];

    it('a current block edited by hand (one figure), or missing', () => {
      const [first] = figures(
        current.split('\n').find((line) => line.startsWith('| ') && !line.startsWith('| system'))!,
      );
      const edited = performance.replace(current, current.replace(`| ${first} |`, `| ${first}1 |`));
      expect(edited).not.toBe(performance);
      expect(currentProblems(edited, run)).toEqual([expect.stringContaining('not the rendering')]);
      expect(currentProblems(performance.replace(current, ''), run)).toEqual([expect.stringContaining('has no')]);
    });

    it("a README ratio that is not the current run's, or none", () => {
      const altered = readme.replace('## Performance\n', '## Performance\n\nThe stack 9.99x mcp-proxy.\n');
      expect(readmeProblems(altered, 'Performance', current)).toEqual([expect.stringContaining('9.99x not')]);
      expect(readmeProblems('# README\n\n## Performance\n\nFast.\n', 'Performance', current)).toEqual([
        expect.stringContaining('quotes no ratio'),
      ]);
    });

    it("an older run's figure in a history row (the README's old 1,830 calls/s)", () => {
      const stale = block.replace(callsPerSecond, '1,830');
      expect(problems(benchmarks.replace(block, stale))).toEqual([
        expect.stringContaining(`row "${firstRow.run}": 1,830 not in the section`),
      ]);
    });

    it('a newer run recorded without a row', () => {
      const newer = `${benchmarks}\n## Issue 99: another run (2099-01-01, 10:00)\n\n1,999 calls/s.\n`;
      expect(problems(newer)).toEqual([
        expect.stringContaining('"Issue 99: another run (2099-01-01, 10:00)", has no row'),
      ]);
    });

    it('a run recorded out of order, and a row naming no section', () => {
      const early = `${benchmarks}\n## Stop 0: a late entry (2020-01-01)\n`;
      expect(problems(early)).toContainEqual(expect.stringContaining('comes after a later run'));
      const renamed = block.replace(`| ${firstRow.run} |`, '| Stop 99 |');
      expect(problems(benchmarks.replace(block, renamed))).toContainEqual(
        expect.stringContaining('row "Stop 99": no "## Stop 99: …" section'),
      );
    });
  });
});
