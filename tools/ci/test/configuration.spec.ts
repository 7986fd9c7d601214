import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * docs/configuration.md's table is checked against the apps' env classes: every
 * variable an app reads is listed exactly once, with the default the class gives it
 * and the apps that read it, and nothing else is listed. Renaming a variable, changing
 * a default or adding one without documenting it fails here.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const APPS = ['gateway', 'message-service', 'agent-pod'] as const;
type App = (typeof APPS)[number];
/** Defaults that depend on the process (its pid, its host name): documented in words. */
const PER_PROCESS = new Set(['SERVICE_INSTANCE', 'POD_ID']);

interface Row {
  names: string[];
  defaultCell: string;
  readBy: string;
}

/** The rows of the table under the page's "# Configuration" title whose first cell names variables. */
function configurationRows(page: string): Row[] {
  const section = page.split(/^# Configuration$/m)[1]?.split(/^##? /m)[0];
  if (!section) throw new Error('docs/configuration.md has no "# Configuration" title');
  return section
    .split('\n')
    .filter((line) => /^\| `[A-Z]/.test(line))
    .map((line) => {
      const cells = line
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((cell) => cell.trim());
      return {
        names: [...cells[0].matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]),
        defaultCell: cells[1],
        readBy: cells[2],
      };
    });
}

function expectedDefaultCell(name: string, defaults: Partial<Record<App, unknown>>): string | undefined {
  const values = Object.entries(defaults) as [App, unknown][];
  if (PER_PROCESS.has(name)) return undefined;
  if (new Set(values.map(([, value]) => String(value))).size > 1) {
    return values.map(([app, value]) => `${app} \`${String(value)}\``).join(', ');
  }
  const value = String(values[0][1]);
  return value === '' ? '(none)' : `\`${value}\``;
}

describe('the configuration table (docs/configuration.md)', () => {
  const defaults = new Map<string, Partial<Record<App, unknown>>>();
  let rows: Row[];

  beforeAll(async () => {
    for (const app of APPS) {
      const module = (await import(resolve(root, `apps/${app}/src/config/${app}.env.ts`))) as {
        loadEnv: (env: object) => Record<string, unknown>;
      };
      for (const [name, value] of Object.entries(module.loadEnv({}))) {
        defaults.set(name, { ...defaults.get(name), [app]: value });
      }
    }
    rows = configurationRows(readFileSync(join(root, 'docs/configuration.md'), 'utf8'));
  });

  it('lists every variable the apps read exactly once, and no other', () => {
    const listed = rows.flatMap((row) => row.names);
    expect(
      listed.filter((name, i) => listed.indexOf(name) !== i),
      'listed twice',
    ).toEqual([]);
    expect([...listed].sort()).toEqual([...defaults.keys()].sort());
  });

  it('gives each variable the default of its env class and the apps that read it', () => {
    const problems: string[] = [];
    for (const row of rows) {
      if (row.names.length !== 1) problems.push(`${row.names.join(', ')}: one variable per row`);
      const [name] = row.names;
      const byApp = defaults.get(name);
      if (!byApp) continue;
      const expected = expectedDefaultCell(name, byApp);
      if (expected !== undefined && !row.defaultCell.startsWith(expected)) {
        problems.push(`${name}: default "${row.defaultCell}", the env class says "${expected}"`);
      }
      if (expected === undefined && !row.defaultCell.startsWith('(')) {
        problems.push(`${name}: a per-process default is described in parentheses`);
      }
      const apps = Object.keys(byApp);
      const readBy = apps.length === APPS.length ? 'all' : apps.join(', ');
      if (row.readBy !== readBy) problems.push(`${name}: read by "${row.readBy}", the env classes say "${readBy}"`);
    }
    expect(problems).toEqual([]);
  });

  it('catches a stale row (the control)', () => {
    const stale = configurationRows('# Configuration\n| `GATEWAY_PORT` | `3001` | gateway | x |\n');
    expect(expectedDefaultCell('GATEWAY_PORT', defaults.get('GATEWAY_PORT')!)).not.toBe(stale[0].defaultCell);
  });
});
