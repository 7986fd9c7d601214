import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The Chinese documentation stays in step with the English:
 *
 * - README.zh.md mirrors README.md: the same headings at the same levels in the same
 *   order, and section by section the same links (to the same pages and anchors; the
 *   two READMEs' links to each other and to the Chinese-only docs/zh/ aside), the same
 *   code blocks (commands equal, comments free to be translated) and the same ratios;
 *   README.md links to README.zh.md at its top, README.zh.md back;
 * - docs/zh/reference.md, the Chinese reference, keeps the English pages' tables: each
 *   table with a `code` column (surface A in docs/mcp-clients.md, surface B in
 *   docs/grants.md, the files API in docs/attachments.md) has its counterpart, in the
 *   same order, with the same codes row by row (and the same HTTP statuses where the
 *   table has them); docs/configuration.md's tables (generated, one per concern): the
 *   same variables in the same order in the one Chinese table, each with the same
 *   default (its code spans; a default described in words, "(none)", is described in
 *   words in both);
 *
 * Controls feed altered copies to the same comparisons.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');
const readme = read('README.md');
const readmeZh = read('README.zh.md');
/** The English pages the Chinese reference translates, in its order. */
const en = ['docs/mcp-clients.md', 'docs/grants.md', 'docs/attachments.md'].map(read).join('\n');
/** The English configuration reference: the whole page, its tables by app and concern. */
const enConfiguration = read('docs/configuration.md');
const zh = read('docs/zh/reference.md');
const ZH_CONFIGURATION = '## 配置';

type Table = string[][];

/** Every Markdown table of a text: runs of lines starting with `|`, the separator row dropped. */
function tables(text: string): Table[] {
  const found: Table[] = [];
  let current: Table | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith('|')) {
      current = undefined;
      continue;
    }
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim());
    if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
    if (!current) found.push((current = []));
    current.push(cells);
  }
  return found;
}

/** A cell's code spans (`-32700` / `-32600` → "-32700 | -32600"); a cell without any: "(words)". */
const codes = (cell: string): string => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]).join(' | ') || '(words)';

const CODE_HEADERS = ['code', '错误码', '错误代码'];
const STATUS_HEADERS = ['HTTP', 'status', 'HTTP 状态码'];

/** The error tables: for each table with a code column, its rows as "status: codes". */
function errorTables(text: string): string[][] {
  return tables(text)
    .filter(([header]) => header.some((h) => CODE_HEADERS.includes(h)))
    .map(([header, ...rows]) => {
      const code = header.findIndex((h) => CODE_HEADERS.includes(h));
      const status = header.findIndex((h) => STATUS_HEADERS.includes(h));
      return rows.map((row) => `${status >= 0 ? `${row[status]}: ` : ''}${codes(row[code])}`);
    });
}

/** The Chinese reference's configuration section: under its heading, to the next heading of its level or above. */
function zhConfiguration(text: string): string {
  const section = text.split(new RegExp(`^${ZH_CONFIGURATION}$`, 'm'))[1]?.split(/^##? /m)[0];
  if (!section) throw new Error(`no "${ZH_CONFIGURATION}" section`);
  return section;
}

/** The configuration rows of a text's tables, as "NAME = default's code spans". */
function configuration(text: string): string[] {
  return tables(text)
    .flat()
    .filter((row) => /^`[A-Z][A-Z0-9_]*`$/.test(row[0]))
    .map((row) => `${row[0].slice(1, -1)} = ${codes(row[1])}`);
}

function differences(english: string, chinese: string, englishConfiguration = enConfiguration): string[] {
  const problems: string[] = [];
  const a = errorTables(english);
  const b = errorTables(chinese);
  if (a.length !== b.length) problems.push(`error tables: README.md has ${a.length}, README.zh.md ${b.length}`);
  a.forEach((rows, i) => {
    const other = b[i] ?? [];
    const n = Math.max(rows.length, other.length);
    for (let r = 0; r < n; r++)
      if (rows[r] !== other[r])
        problems.push(`error table ${i + 1}, row ${r + 1}: README.md "${rows[r]}", README.zh.md "${other[r]}"`);
  });
  const c = configuration(englishConfiguration);
  const d = configuration(zhConfiguration(chinese));
  const n = Math.max(c.length, d.length);
  for (let r = 0; r < n; r++)
    if (c[r] !== d[r]) problems.push(`configuration row ${r + 1}: README.md "${c[r]}", README.zh.md "${d[r]}"`);
  return problems;
}

interface Section {
  heading: string;
  level: number;
  links: string[];
  code: string[];
  ratios: string[];
}

/** A README's sections: each heading with its level, its links, its code blocks' commands and its ratios. */
function sections(text: string): Section[] {
  const found: Section[] = [];
  let fenced: string[] | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) {
      if (fenced) {
        found.at(-1)?.code.push(fenced.join('\n'));
        fenced = undefined;
      } else fenced = [];
      continue;
    }
    if (fenced) {
      // Comments are prose: translated, not compared.
      fenced.push(line.replace(/\s+(#|\/\/)\s.*$/, '').trimEnd());
      continue;
    }
    const heading = /^(#{1,6}) (.+)$/.exec(line);
    if (heading) {
      found.push({ heading: heading[2], level: heading[1].length, links: [], code: [], ratios: [] });
      continue;
    }
    const section = found.at(-1);
    if (!section) continue;
    for (const m of line.matchAll(/\]\(([^)\s]+)\)/g))
      if (!/^(README(\.zh)?\.md|docs\/zh\/)/.test(m[1])) section.links.push(m[1]);
    section.ratios.push(...(line.match(/\d+(?:\.\d+)?x(?![A-Za-z0-9])/g) ?? []));
  }
  for (const section of found) section.links.sort();
  return found;
}

/** How README.zh.md's structure differs from README.md's (empty: a mirror). */
function mirrorDifferences(english: string, chinese: string): string[] {
  const problems: string[] = [];
  const a = sections(english);
  const b = sections(chinese);
  if (a.length !== b.length) problems.push(`sections: README.md has ${a.length}, README.zh.md ${b.length}`);
  a.forEach((section, i) => {
    const other = b[i];
    if (!other) return;
    const name = `section ${i + 1} ("${section.heading}" / "${other.heading}")`;
    if (section.level !== other.level) problems.push(`${name}: level ${section.level} against ${other.level}`);
    if (section.links.join(' ') !== other.links.join(' '))
      problems.push(`${name}: links ${section.links.join(' ')} against ${other.links.join(' ')}`);
    if (section.code.join('\n---\n') !== other.code.join('\n---\n')) problems.push(`${name}: code blocks differ`);
    if (section.ratios.join(' ') !== other.ratios.join(' '))
      problems.push(`${name}: ratios ${section.ratios.join(' ')} against ${other.ratios.join(' ')}`);
  });
  return problems;
}

describe('README.zh.md', () => {
  it('mirrors README.md: its headings, and section by section its links, commands and ratios', () => {
    expect(mirrorDifferences(readme, readmeZh)).toEqual([]);
  });

  it('compares something: every section, its links and its commands', () => {
    const english = sections(readme);
    expect(english.length).toBeGreaterThanOrEqual(15);
    expect(english.flatMap((s) => s.links)).toEqual(
      expect.arrayContaining(['docs/grants.md', 'docs/rest.md', 'docs/a2a.md', 'docs/operations/README.md']),
    );
    expect(english.flatMap((s) => s.code).join('\n')).toContain('npm ci && npm test');
    expect(english.find((s) => s.heading === 'Performance')?.ratios.length).toBeGreaterThanOrEqual(3);
  });

  it('is linked from the top of README.md and links back', () => {
    expect(readme.split('\n').slice(0, 5).join('\n')).toContain('](README.zh.md)');
    expect(readmeZh.split('\n').slice(0, 5).join('\n')).toContain('](README.md)');
  });

  describe('controls: altered copies fail', () => {
    it('a section left out', () => {
      const altered = readmeZh.replace(/^## 附件\n[\s\S]*?(?=^## )/m, '');
      expect(altered).not.toBe(readmeZh);
      const n = sections(readme).length;
      expect(mirrorDifferences(readme, altered)[0]).toBe(`sections: README.md has ${n}, README.zh.md ${n - 1}`);
    });

    it('a link to another page, a changed command, a changed ratio', () => {
      const [ratio] = sections(readmeZh).find((s) => s.heading === '性能')!.ratios;
      const altered = readmeZh
        .replace('[docs/grants.md](docs/grants.md)', '[docs/grants.md](docs/rest.md)')
        .replace('npm ci && npm test    #', 'npm install && npm test    #')
        .replace(ratio, '9.99x');
      expect(mirrorDifferences(readme, altered)).toEqual([
        expect.stringMatching(/^section 3 \("Two commands" .*: code blocks differ$/),
        expect.stringMatching(/^section \d+ \("Task-scoped grants" .*: links docs\/grants.md against docs\/rest.md$/),
        expect.stringMatching(new RegExp(`^section \\d+ \\("Performance" .*: ratios .*${ratio}.* against .*9.99x`)),
      ]);
    });

    it('a comment translated is not a difference', () => {
      const altered = readmeZh.replace('# 构建并以本地默认配置运行全部三个应用', '# 构建并运行');
      expect(altered).not.toBe(readmeZh);
      expect(mirrorDifferences(readme, altered)).toEqual([]);
    });
  });
});

describe('docs/zh/reference.md', () => {
  it("has the English pages' error codes and configuration (names and defaults), table by table and row by row", () => {
    expect(differences(en, zh)).toEqual([]);
  });

  it('compares something: three error tables and every configuration row', () => {
    expect(errorTables(en).map((t) => t.length)).toEqual([8, 8, 9]);
    expect(errorTables(en)[0]).toContain('-32003');
    expect(errorTables(en)[1]).toContain('401: -32003');
    expect(configuration(enConfiguration).length).toBeGreaterThan(100);
    expect(configuration(enConfiguration)).toContain('NODE_ENV = development');
    expect(configuration(enConfiguration)).toContain('DATABASE_URL = postgres://postgres@127.0.0.1:5432/mcpgw');
    // Every table of the generated page is read, not only the first.
    expect(configuration(enConfiguration).at(-1)).toBe('POD_CONCURRENCY = 64');
  });

  it('is linked from README.zh.md', () => {
    expect(readmeZh.split('\n').slice(0, 5).join('\n')).toContain('](docs/zh/reference.md)');
  });

  it("has the quick start's commands, both surfaces and the sections in the source documents' words", () => {
    for (const command of ['npm ci && npm start', 'npm ci && npm test', 'POST /{agent_id}/mcp', 'X-Agent-API-Key'])
      expect(zh).toContain(command);
    expect(zh).toContain('POST /workspaces/{workspace_id}/agents/{agent_id}/mcp/http');
    expect(zh).toContain('Authorization: Bearer <RuntimeGrant>');
    const headings = [...zh.matchAll(/^##+ (.+)$/gm)].map((m) => m[1]);
    for (const heading of ['附件', '幂等', 'HMAC 签名回调', '编写智能体', '配置'])
      expect(headings, heading).toContain(heading);
    expect(headings.some((h) => h.includes('快速开始'))).toBe(true);
    expect(headings.some((h) => h.includes('入口 A'))).toBe(true);
    expect(headings.some((h) => h.includes('入口 B'))).toBe(true);
  });

  describe('controls: altered copies fail', () => {
    it('a code changed in a Chinese error table', () => {
      const altered = zh.replace('| `-32005` | HTTP 429', '| `-32006` | HTTP 429');
      expect(altered).not.toBe(zh);
      expect(differences(en, altered)).toEqual(['error table 1, row 8: README.md "-32005", README.zh.md "-32006"']);
    });

    it('a row missing, and a status changed, in the files table', () => {
      const altered = zh
        .replace(/^\| 416 \| `range_not_satisfiable` \|.*\n/m, '')
        .replace('| 415 | `content_type_mismatch`', '| 400 | `content_type_mismatch`');
      expect(differences(en, altered)).toEqual(
        expect.arrayContaining([
          'error table 3, row 6: README.md "415: content_type_mismatch", README.zh.md "400: content_type_mismatch"',
          'error table 3, row 7: README.md "416: range_not_satisfiable", README.zh.md "429: file_quota_exceeded"',
        ]),
      );
    });

    it('a default changed in Chinese, and a variable added to README.md only', () => {
      const altered = zh.replace('| `GATEWAY_PORT` | `3000` |', '| `GATEWAY_PORT` | `3001` |');
      expect(differences(en, altered)).toEqual([
        'configuration row 24: README.md "GATEWAY_PORT = 3000", README.zh.md "GATEWAY_PORT = 3001"',
      ]);
      const row = '| `GATEWAY_PORT` | `3000` | integer 0–65535 | The public MCP port. |';
      const added = enConfiguration.replace(row, `${row}\n| \`GATEWAY_HOST\` | \`0.0.0.0\` | any text | x |`);
      expect(added).not.toBe(enConfiguration);
      expect(differences(en, zh, added)[0]).toBe(
        'configuration row 25: README.md "GATEWAY_HOST = 0.0.0.0", README.zh.md "CALL_TIMEOUT_MS = 60000"',
      );
    });

    it('a default in words on one side and a value on the other', () => {
      const altered = zh.replace('| `NATS_CREDS` | （无） |', '| `NATS_CREDS` | `/auth/nats.creds` |');
      expect(differences(en, altered)).toEqual([
        'configuration row 4: README.md "NATS_CREDS = (words)", README.zh.md "NATS_CREDS = /auth/nats.creds"',
      ]);
    });
  });
});
