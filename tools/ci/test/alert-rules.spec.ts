import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';

/**
 * The SLIs and alerts (deploy/observability/prometheus/rules.yml, docs/operations/slos.md),
 * checked with promtool (Debian package `prometheus`; `.ci/run` installs it):
 *
 * - `promtool check rules` on the rule file, `promtool test rules` on its unit tests
 *   (rules.test.yml: input series → the alerts expected at given times, labels and
 *   annotations exactly; an empty list means "must not fire");
 * - every alert has a test where it fires, and the burn-rate alerts one where they do not;
 * - mutation: each alert's threshold moved (doubled, then halved; 0 becomes 2 or `>=`)
 *   must make the unit tests fail, so no test passes whatever the threshold;
 * - the prod overlay's PrometheusRule holds exactly the rule file's groups.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const dir = join(root, 'deploy/observability/prometheus');
const run = promisify(execFile);

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
}
interface RuleFile {
  groups: { name: string; rules: Rule[] }[];
}
interface UnitTests {
  tests: { name: string; alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
}

const rules = parse(readFileSync(join(dir, 'rules.yml'), 'utf8')) as RuleFile;
const unitTests = parse(readFileSync(join(dir, 'rules.test.yml'), 'utf8')) as UnitTests;
const alerts = rules.groups.flatMap((g) => g.rules).filter((r): r is Rule & { alert: string } => !!r.alert);
const scratch = mkdtempSync(join(tmpdir(), 'mcpgw-rules-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function promtool(...args: string[]): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run('promtool', args, { cwd: dir });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: (e.stdout ?? '') + (e.stderr ?? e.message) };
  }
}

/** A comparison with a constant: `> 0.05`, `< 7 * 86400`, `> (14.4 * 0.005)`, `> 5 * sum…`. */
const THRESHOLD = /([<>])\s*(?!=)(\(\s*[\d.]+(?:\s*\*\s*[\d.]+)*\s*\)|[\d.]+(?:\s*\*\s*[\d.]+)*)(?=\s|$)/g;

const valueOf = (text: string) =>
  text
    .replace(/[()\s]/g, '')
    .split('*')
    .reduce((product, factor) => product * Number(factor), 1);

/** The alert's expression with its thresholds made stricter and looser (or its comparison flipped). */
export function mutants(expr: string): string[] {
  if (!expr.match(THRESHOLD)) {
    if (/==\s*0\b/.test(expr)) return [expr.replace(/==\s*0\b/, '== 1')];
    return [expr.replace(/\n(\s*)</, '\n$1<=').replace(/\)\s*<\s*(?!=)/, ') <= ')];
  }
  const moved = (stricter: boolean) =>
    expr.replace(THRESHOLD, (_all, op: string, operand: string) => {
      const v = valueOf(operand);
      if (op === '>') {
        if (v === 0) return stricter ? '> 2' : '>= 0';
        return `> ${stricter ? 2 * v : v / 2}`;
      }
      return `< ${stricter ? v / 2 : 2 * v}`;
    });
  return [moved(true), moved(false)];
}

describe('alert rules (promtool)', () => {
  it('pass promtool check rules', async () => {
    const { ok, output } = await promtool('check', 'rules', 'rules.yml');
    expect(output).toContain('SUCCESS');
    expect(ok).toBe(true);
  });

  it('pass their unit tests (promtool test rules)', { timeout: 60_000 }, async () => {
    const { ok, output } = await promtool('test', 'rules', 'rules.test.yml');
    expect(output, output).toContain('SUCCESS');
    expect(ok).toBe(true);
  });

  it('each alert has a unit test where it fires; the burn-rate ones one where they must not', () => {
    const cases = unitTests.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const { alert } of alerts) {
      expect(
        cases.some((c) => c.alertname === alert && c.exp_alerts.length > 0),
        `${alert} fires in a test`,
      ).toBe(true);
      if (/Burn/.test(alert))
        expect(
          cases.some((c) => c.alertname === alert && c.exp_alerts.length === 0),
          `${alert} held silent in a test`,
        ).toBe(true);
    }
  });

  it('each alert has a summary, a description and a runbook_url', () => {
    for (const rule of alerts) {
      const annotations = (rule as { annotations?: Record<string, string> }).annotations ?? {};
      expect(Object.keys(annotations).sort(), rule.alert).toEqual(['description', 'runbook_url', 'summary']);
    }
  });

  it('the unit tests fail when an alert threshold moves', { timeout: 180_000 }, async () => {
    // Each alert's own expression first, through the same files: a control that must pass.
    const jobs = alerts.flatMap((alert) => [
      { alert: alert.alert, expr: alert.expr, i: 0, control: true },
      ...mutants(alert.expr).map((expr, i) => ({ alert: alert.alert, expr, i: i + 1, control: false })),
    ]);
    const survivors: string[] = [];
    const failedControls: string[] = [];
    // Two at a time (a promtool run is short; the machine is shared).
    for (let k = 0; k < jobs.length; k += 2) {
      await Promise.all(
        jobs.slice(k, k + 2).map(async ({ alert, expr, i, control }) => {
          if (!control)
            expect(expr, `${alert}: a mutant differs`).not.toBe(alerts.find((a) => a.alert === alert)!.expr);
          const mutated: RuleFile = {
            groups: rules.groups.map((g) => ({
              ...g,
              rules: g.rules.map((r) => (r.alert === alert ? { ...r, expr } : r)),
            })),
          };
          const name = `${alert}-${i}`;
          writeFileSync(join(scratch, `${name}.rules.yml`), stringify(mutated));
          // Only the tests that check this alert: each promtool run stays short.
          const own = unitTests.tests.filter((t) => t.alert_rule_test?.some((c) => c.alertname === alert));
          writeFileSync(
            join(scratch, `${name}.test.yml`),
            stringify({ ...unitTests, rule_files: [`${name}.rules.yml`], tests: own }),
          );
          const { ok } = await promtool('test', 'rules', join(scratch, `${name}.test.yml`));
          if (control && !ok) failedControls.push(alert);
          if (!control && ok) survivors.push(`${alert}: ${expr}`);
        }),
      );
    }
    expect(failedControls).toEqual([]);
    expect(survivors).toEqual([]);
  });

  it('the prod overlay PrometheusRule holds the same groups as the rule file', () => {
    const rule = parse(readFileSync(join(root, 'deploy/k8s/overlays/prod/prometheus-rule.yaml'), 'utf8')) as {
      apiVersion: string;
      kind: string;
      spec: RuleFile;
    };
    expect([rule.apiVersion, rule.kind]).toEqual(['monitoring.coreos.com/v1', 'PrometheusRule']);
    expect(rule.spec).toEqual(rules);
  });
});
