import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * apps/gateway/README.md, the map of the gateway, stays true: it names every folder of
 * apps/gateway/src once, each on a line `- **`folder/`**: … Must not import: `a/`, `b/`.`,
 * and no file of a folder imports (by a relative path) a folder its line forbids. A
 * control feeds a map with a false rule and one with a folder left out.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const src = join(root, 'apps/gateway/src');

interface Rule {
  folder: string;
  forbidden: string[];
}

/** The map's lines: each folder and the folders it must not import. */
function rules(map: string): Rule[] {
  return [...map.matchAll(/^- \*\*`([a-z0-9-]+)\/`\*\*:.*$/gm)].map((m) => ({
    folder: m[1],
    forbidden: [...(/Must not import: (.*)$/.exec(m[0])?.[1] ?? '').matchAll(/`([a-z0-9-]+)\/`/g)].map((f) => f[1]),
  }));
}

/** The TypeScript files under a folder. */
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return files(path);
    return entry.endsWith('.ts') ? [path] : [];
  });
}

/** The top folders of src/ a folder's files import, each with a file that does. */
function importedFolders(folder: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of files(join(src, folder))) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.{1,2}\/[^']+)'/g)) {
      const target = relative(src, resolve(dirname(file), m[1])).split(sep)[0];
      if (target !== folder && !found.has(target)) found.set(target, relative(root, file));
    }
  }
  return found;
}

/** Everything wrong with a map (empty: every folder once, every rule kept). */
function problems(map: string): string[] {
  const found: string[] = [];
  const listed = rules(map);
  const folders = readdirSync(src).filter((entry) => statSync(join(src, entry)).isDirectory());
  for (const folder of folders) {
    const count = listed.filter((r) => r.folder === folder).length;
    if (count !== 1) found.push(`${folder}/: listed ${count} times`);
  }
  for (const { folder, forbidden } of listed) {
    if (!folders.includes(folder)) {
      found.push(`${folder}/: no such folder in apps/gateway/src`);
      continue;
    }
    if (!forbidden.length) found.push(`${folder}/: says nothing it must not import`);
    const imported = importedFolders(folder);
    for (const f of forbidden) {
      if (!folders.includes(f)) found.push(`${folder}/: forbids ${f}/, no such folder`);
      const by = imported.get(f);
      if (by) found.push(`${folder}/ must not import ${f}/, but ${by} does`);
    }
  }
  return found;
}

const map = readFileSync(join(root, 'apps/gateway/README.md'), 'utf8');

describe('the map of the gateway (apps/gateway/README.md)', () => {
  it('names every folder of src/ once, and no folder imports what its line forbids', () => {
    expect(rules(map).length).toBeGreaterThan(20);
    expect(problems(map)).toEqual([]);
  });

  describe('controls: altered maps fail', () => {
    it('a rule the code breaks (calls/ imports timeouts/)', () => {
      const altered = map.replace(/^(- \*\*`calls\/`\*\*:.*Must not import: )/m, '$1`timeouts/`, ');
      expect(altered).not.toBe(map);
      expect(problems(altered)).toEqual([
        expect.stringMatching(/^calls\/ must not import timeouts\/, but apps\/gateway\/src\/calls\/.+ does$/),
      ]);
    });

    it('a folder left out, and one that does not exist', () => {
      const altered = map.replace(/^- \*\*`metrics\/`\*\*:.*\n/m, '- **`nowhere/`**: gone. Must not import: `mcp/`.\n');
      expect(problems(altered)).toEqual(['metrics/: listed 0 times', 'nowhere/: no such folder in apps/gateway/src']);
    });
  });
});
