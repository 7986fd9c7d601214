import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The documentation's links resolve, and the README stays a door:
 *
 * - README.md is at most 300 lines (the rest lives in docs/, one page per task);
 * - every relative link and image in README.md, README.zh.md, apps/gateway/README.md and
 *   every docs/**\/*.md names a file or folder that exists, and its `#anchor`, when it has
 *   one and points into a Markdown file (or the page itself), names a heading there, by
 *   GitHub's slug rules (lower case, punctuation dropped, spaces to dashes, `-1`, `-2` for
 *   repeated headings) or an explicit `<a id>` / `<a name>`.
 *
 * Links inside code (fenced blocks and `code spans`) are not links. A control writes a
 * synthetic page with a broken file link, a broken anchor and good ones, and expects
 * exactly the broken ones reported.
 *
 * And the README's two commands stay true: `npm ci && npm start` and `npm ci && npm test`
 * name package.json's scripts, and the test command is what .ci/run runs (`npm ci`, then
 * `npm test`).
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const README_MAX_LINES = 300;

/** The Markdown files whose links are checked: the two READMEs, the gateway's map, docs/ whole. */
function documents(base: string): string[] {
  const found = ['README.md', 'README.zh.md', 'apps/gateway/README.md']
    .map((file) => join(base, file))
    .filter((file) => existsSync(file));
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (entry.endsWith('.md')) found.push(path);
    }
  };
  walk(join(base, 'docs'));
  return found;
}

/** A text's lines outside fenced code blocks (``` or ~~~), code spans blanked. */
function prose(text: string): string[] {
  const lines: string[] = [];
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (!fence || marker.startsWith(fence))) {
      fence = fence ? undefined : marker;
      lines.push('');
      continue;
    }
    lines.push(fence ? '' : line.replace(/(`+)(?:(?!\1).)+?\1/g, (span) => ' '.repeat(span.length)));
  }
  return lines;
}

/** A heading's anchor as GitHub makes it (github-slugger on the heading's text). */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/[*_~`]/g, (c) => (c === '_' ? '_' : '')); // emphasis and code marks, not underscores
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown text offers: its headings' slugs (repeats numbered) and `<a id|name>`. */
function anchors(text: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (!fence || marker.startsWith(fence))) {
      fence = fence ? undefined : marker;
      continue;
    }
    if (fence) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      found.add(n ? `${base}-${n}` : base);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(m[1]);
  }
  return found;
}

/** The link targets of a text, with their line numbers: inline links, images, reference definitions. */
function links(text: string): { line: number; target: string }[] {
  const found: { line: number; target: string }[] = [];
  prose(text).forEach((line, i) => {
    for (const m of line.matchAll(/!?\[(?:[^\]]|\][^(])*?\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      found.push({ line: i + 1, target: m[1] });
    const definition = /^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)/.exec(line);
    if (definition) found.push({ line: i + 1, target: definition[1] });
  });
  return found;
}

/** Every link of the given files that does not resolve, as "file:line: target (why)". */
function brokenLinks(base: string, files: string[]): string[] {
  const problems: string[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const anchorsIn = (file: string): Set<string> => {
    if (!anchorsOf.has(file)) anchorsOf.set(file, anchors(readFileSync(file, 'utf8')));
    return anchorsOf.get(file)!;
  };
  for (const file of files) {
    const name = relative(base, file);
    for (const { line, target } of links(readFileSync(file, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // http:, mailto:, …
      const hash = target.indexOf('#');
      const path = decodeURIComponent(hash >= 0 ? target.slice(0, hash) : target).split('?')[0];
      const anchor = hash >= 0 ? decodeURIComponent(target.slice(hash + 1)) : undefined;
      const resolved = path ? resolve(dirname(file), path) : file;
      if (!existsSync(resolved)) {
        problems.push(`${name}:${line}: ${target} (no such file)`);
        continue;
      }
      if (anchor === undefined || !resolved.endsWith('.md') || !statSync(resolved).isFile()) continue;
      if (!anchorsIn(resolved).has(anchor)) problems.push(`${name}:${line}: ${target} (no such heading)`);
    }
  }
  return problems;
}

/** How the README's two commands disagree with package.json and .ci/run (empty: they agree). */
function commandProblems(readme: string, ciRun: string, scripts: Record<string, string>): string[] {
  const problems: string[] = [];
  for (const script of ['start', 'test']) {
    if (!new RegExp(`^npm ci && npm ${script}\\b`, 'm').test(readme))
      problems.push(`README.md has no line "npm ci && npm ${script}"`);
    if (!scripts[script]) problems.push(`package.json has no "${script}" script`);
  }
  const install = ciRun.search(/^npm ci\b/m);
  const test = ciRun.search(/^npm test\b/m);
  if (install < 0 || test < install) problems.push('.ci/run does not run npm ci, then npm test');
  return problems;
}

describe('the documentation', () => {
  it("README.md's two commands are package.json's scripts, and its test command is what .ci/run runs", () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const ciRun = readFileSync(join(root, '.ci/run'), 'utf8');
    const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(commandProblems(readme, ciRun, scripts)).toEqual([]);
    // Control: a README whose test command drifted.
    expect(
      commandProblems(readme.replace('npm ci && npm test', 'npm ci && npm run test:unit'), ciRun, scripts),
    ).toEqual(['README.md has no line "npm ci && npm test"']);
  });

  it(`README.md is a door: at most ${README_MAX_LINES} lines`, () => {
    const lines = readFileSync(join(root, 'README.md'), 'utf8').trimEnd().split('\n').length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('every relative link and anchor in the READMEs and docs/ resolves', () => {
    const files = documents(root);
    expect(files.map((f) => relative(root, f))).toEqual(
      expect.arrayContaining(['README.md', 'README.zh.md', 'docs/configuration.md', 'docs/operations/README.md']),
    );
    expect(brokenLinks(root, files)).toEqual([]);
  });

  it('reads links and headings as GitHub does', () => {
    expect(slug('The task-scoped endpoint (surface B)')).toBe('the-task-scoped-endpoint-surface-b');
    expect(slug('The bridge (`mcpgw-bridge`)')).toBe('the-bridge-mcpgw-bridge');
    expect(slug('Stop 34, final: the whole stop (A/B, 2026-12-02)')).toBe('stop-34-final-the-whole-stop-ab-2026-12-02');
    expect(slug('快速开始：两条命令')).toBe('快速开始两条命令');
    expect([...anchors('# A\n## A\n```\n# not a heading\n```\n<a id="x"></a>\n')]).toEqual(['a', 'a-1', 'x']);
    expect(links('[a](b.md) `[c](d.md)` ![e](f.png)\n```\n[g](h.md)\n```\n[i]: j.md').map((l) => l.target)).toEqual([
      'b.md',
      'f.png',
      'j.md',
    ]);
  });

  describe('control: a synthetic page', () => {
    const dir = mkdtempSync(join(tmpdir(), 'docs-links-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('has its broken links reported, and only those', () => {
      writeFileSync(join(dir, 'other.md'), '# Other page\n\n## A section\n');
      writeFileSync(
        join(dir, 'page.md'),
        [
          '# Page',
          '',
          '## Here',
          '',
          '[good](other.md) [good anchor](other.md#a-section) [self](#here) [web](https://example.com/x)',
          '[missing file](gone.md) [missing anchor](other.md#no-section)',
          '[missing self anchor](#nowhere)',
          '`[in code](also-gone.md)`',
        ].join('\n'),
      );
      expect(brokenLinks(dir, [join(dir, 'page.md')])).toEqual([
        'page.md:6: gone.md (no such file)',
        'page.md:6: other.md#no-section (no such heading)',
        'page.md:7: #nowhere (no such heading)',
      ]);
    });
  });
});
