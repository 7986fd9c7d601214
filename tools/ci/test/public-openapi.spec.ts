import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { PUBLIC_OPENAPI } from '../../../apps/gateway/src/rest/openapi/public-openapi';

/**
 * The public REST surface's OpenAPI document passes a real OpenAPI linter,
 * Redocly CLI (pinned in devDependencies), with redocly.yaml's rules
 * (recommended-strict: its warnings are errors too). The document is the
 * module the gateway serves, written out as JSON the way it is served.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const scratch = mkdtempSync(join(tmpdir(), 'public-openapi-'));

interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer: string }[];
}

/** Redocly's findings on `document`, and its exit status. */
function lint(document: unknown, name: string): { status: number | null; problems: LintProblem[] } {
  const file = join(scratch, `${name}.json`);
  writeFileSync(file, JSON.stringify(document, null, 2));
  const run = spawnSync(
    resolve(root, 'node_modules/.bin/redocly'),
    ['lint', file, '--config', resolve(root, 'redocly.yaml'), '--format', 'json'],
    {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
      // Offline and quiet: no usage report, no update check.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  );
  const json = run.stdout.slice(run.stdout.indexOf('{'));
  const report = JSON.parse(json) as { problems: LintProblem[] };
  return { status: run.status, problems: report.problems };
}

const summary = (problems: LintProblem[]) =>
  problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);

describe('the public OpenAPI document under `redocly lint`', () => {
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('has no problem', () => {
    const { status, problems } = lint(PUBLIC_OPENAPI, 'public-openapi');
    expect(summary(problems)).toEqual([]);
    expect(status).toBe(0);
  });

  it('fails a document with an undefined security scheme and two operations of one operationId (the control)', () => {
    const broken = structuredClone(PUBLIC_OPENAPI) as unknown as {
      paths: Record<string, Record<string, { security?: unknown; operationId?: string }>>;
    };
    broken.paths['/api/v1/calls/{call_id}'].get.security = [{ nobody: [] }];
    broken.paths['/api/v1/calls/{call_id}'].delete.operationId = 'getCall';
    const { status, problems } = lint(broken, 'broken');
    expect(status).not.toBe(0);
    expect(problems.map((p) => p.ruleId)).toEqual(
      expect.arrayContaining(['security-defined', 'operation-operationId-unique']),
    );
  });
});
