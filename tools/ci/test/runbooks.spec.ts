import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * The runbooks (docs/operations/runbooks/): one per alert of
 * deploy/observability/prometheus/rules.yml, named after it, and the alert's
 * `runbook_url` names that file; no runbook without its alert; every relative
 * link of the operations pages resolves; every `npm run admin -- …` they tell the
 * on-call to run is a command of the admin CLI (apps/gateway/src/admin/commands.ts).
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const runbooks = join(root, 'docs/operations/runbooks');
const rules = parse(readFileSync(join(root, 'deploy/observability/prometheus/rules.yml'), 'utf8')) as {
  groups: { rules: { alert?: string; annotations?: { runbook_url?: string } }[] }[];
};
const alerts = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert);
const pages = [
  ...readdirSync(runbooks).map((f) => join(runbooks, f)),
  join(root, 'docs/operations/README.md'),
  join(root, 'docs/operations/slos.md'),
];

describe('runbooks', () => {
  it('every alert has its runbook, and its runbook_url names it', () => {
    for (const { alert, annotations } of alerts) {
      const path = `docs/operations/runbooks/${alert}.md`;
      expect(annotations?.runbook_url, alert).toBe(path);
      expect(existsSync(join(root, path)), path).toBe(true);
    }
  });

  it('every runbook belongs to an alert', () => {
    const names = new Set(alerts.map((a) => `${a.alert}.md`));
    expect(readdirSync(runbooks).filter((f) => !names.has(f))).toEqual([]);
  });

  it('every relative link of the operations pages resolves', () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const [, target] of readFileSync(page, 'utf8').matchAll(/\]\(([^)]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const file = target.split('#')[0];
        if (file && !existsSync(resolve(dirname(page), file))) broken.push(`${page}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every admin command they name exists', () => {
    // commands.ts and the command maps it spreads in (records.command.ts, audit.command.ts, …).
    const admin = join(root, 'apps/gateway/src/admin');
    const commands = readdirSync(admin)
      .filter((file) => file === 'commands.ts' || file.endsWith('.command.ts'))
      .map((file) => readFileSync(join(admin, file), 'utf8'))
      .join('\n');
    const known = new Set([...commands.matchAll(/^ {2}'([a-z-]+(?: [a-z-]+)?)': /gm)].map((m) => m[1]));
    expect(known.size).toBeGreaterThan(10);
    const unknown: string[] = [];
    let named = 0;
    for (const page of pages) {
      for (const [, words] of readFileSync(page, 'utf8').matchAll(/npm run admin -- ([a-z-]+(?: [a-z-]+)?)/g)) {
        named++;
        const [first, second] = words.split(' ');
        if (!known.has(words) && !known.has(first)) unknown.push(`${page}: ${words}`);
        else if (second && !known.has(words) && !known.has(`${first} ${second}`)) unknown.push(`${page}: ${words}`);
      }
    }
    expect(named).toBeGreaterThan(10);
    expect(unknown).toEqual([]);
  });
});
