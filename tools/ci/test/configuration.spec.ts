import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  APPS,
  type App,
  ConfigurationDocError,
  type ConfigurationModel,
  configurationModel,
  configurationPage,
  PAGE_PATH,
  renderConfiguration,
} from '../../docs/src/configuration';

/**
 * docs/configuration.md is generated from the apps' env classes by `npm run
 * docs:configuration` (tools/docs/src/configuration.ts reads them with the
 * TypeScript compiler). Checked here:
 *
 * - the committed page is what the generator writes now: a renamed, added or
 *   removed variable, a changed default or validation, an edited JSDoc without
 *   regenerating fails;
 * - the generator's reading agrees with what the apps load at run time: every
 *   variable `loadEnv({})` returns is on the page exactly once, with that default
 *   and the apps that read it, and nothing else is;
 *
 * Controls: a synthetic env class with a changed default changes the page (and
 * only that row), and a variable without JSDoc stops the generator, naming it.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const AUDIT_ENV = 'apps/gateway/src/config/audit.env.ts';

/** The variables of a page's tables, in order. */
const listed = (page: string): string[] => [...page.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]);

/** The lines of `b` that `a` lacks. */
const changedLines = (a: string, b: string): string[] => {
  const before = new Set(a.split('\n'));
  return b.split('\n').filter((line) => !before.has(line));
};

describe('the configuration reference (docs/configuration.md)', () => {
  /** What each app loads with an empty environment: its variables and their defaults. */
  const runtime = new Map<string, Partial<Record<App, unknown>>>();
  let model: ConfigurationModel;
  let page: string;

  beforeAll(async () => {
    for (const { app, envFile } of APPS) {
      const module = (await import(resolve(root, envFile))) as { loadEnv: (env: object) => Record<string, unknown> };
      for (const [name, value] of Object.entries(module.loadEnv({}))) {
        runtime.set(name, { ...runtime.get(name), [app]: value });
      }
    }
    model = configurationModel(root);
    page = renderConfiguration(model, root);
  }, 60_000);

  it('is what `npm run docs:configuration` writes from the env classes now', () => {
    const committed = readFileSync(join(root, PAGE_PATH), 'utf8');
    expect(committed, `${PAGE_PATH} is stale: run npm run docs:configuration`).toBe(page);
  });

  it('lists every variable the apps load exactly once, and no other', () => {
    const names = listed(page);
    expect(
      names.filter((name, i) => names.indexOf(name) !== i),
      'listed twice',
    ).toEqual([]);
    expect([...names].sort()).toEqual([...runtime.keys()].sort());
    expect(names.length).toBeGreaterThan(100);
  });

  it('gives each variable the default its env class loads with, and the apps that read it', () => {
    const problems: string[] = [];
    const concerns = [...model.shared, ...Object.values(model.byApp).flat()];
    for (const concern of concerns) {
      for (const variable of concern.variables) {
        const byApp = runtime.get(variable.name) ?? {};
        const readers = APPS.map(({ app }) => app).filter((app) => app in byApp);
        if (concern.apps.join() !== readers.join())
          problems.push(`${variable.name}: read by ${concern.apps.join()}, loadEnv says ${readers.join()}`);
        if (variable.defaultInWords) continue; // per process (its pid, its host name): said in words
        for (const app of readers) {
          if (variable.defaults[app] !== byApp[app])
            problems.push(`${variable.name} (${app}): ${variable.defaults[app]}, loadEnv gives ${String(byApp[app])}`);
        }
      }
    }
    expect(problems).toEqual([]);
    // What a words default stands for differs from process to process.
    expect(runtime.get('SERVICE_INSTANCE')?.gateway).toBe(String(process.pid));
    expect(page).toMatch(/^\| `SERVICE_INSTANCE` \| \(the process id\) \|/m);
    expect(page).toMatch(/^\| `MANAGEMENT_PORT` \| gateway `9000`, message-service `9100`, agent-pod `9200` \|/m);
  });

  describe('controls', () => {
    const audit = readFileSync(join(root, AUDIT_ENV), 'utf8');

    it('a changed default in an env class changes that row of the page, and only it', () => {
      const changed = audit.replace('AUDIT_RETENTION_DAYS: number = 400;', 'AUDIT_RETENTION_DAYS: number = 401;');
      expect(changed).not.toBe(audit);
      const synthetic = configurationPage(root, { [AUDIT_ENV]: changed });
      expect(changedLines(page, synthetic)).toEqual([expect.stringMatching(/^\| `AUDIT_RETENTION_DAYS` \| `401` \|/)]);
      expect(synthetic).not.toBe(page);
    }, 60_000);

    it('a variable without JSDoc stops the generator, naming it', () => {
      const added = audit.replace(
        'export class AuditSettings {',
        "export class AuditSettings {\n  @IsIn(['a', 'b'])\n  AUDIT_SOMETHING: string = 'a';\n",
      );
      let error: unknown;
      try {
        configurationModel(root, { [AUDIT_ENV]: added });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigurationDocError);
      expect((error as Error).message).toBe(`${AUDIT_ENV}: AUDIT_SOMETHING has no JSDoc saying what it does`);
    }, 60_000);
  });
});
