import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../../../..');
const CONSOLE = resolve(ROOT, 'apps/console');
const DOCUMENT = 'docs/admin-openapi.yaml';
const GENERATED = 'apps/console/src/generated/admin-api.d.ts';

/** The generator's arguments exactly as the console's build runs it (apps/console/package.json, the nx build target). */
function buildGenerator(): string[] {
  const manifest = JSON.parse(readFileSync(join(CONSOLE, 'package.json'), 'utf8')) as {
    nx: { targets: { build: { options: { command: string } } } };
  };
  const [program, ...args] = manifest.nx.targets.build.options.command.split('&&')[0].trim().split(/\s+/);
  expect(program).toBe('openapi-typescript');
  expect(args).toContain(DOCUMENT);
  expect(args[args.indexOf('--output') + 1]).toBe(GENERATED);
  return args;
}

/** What the build would write from `document`, written to `output` instead. */
function generate(document: string, output: string): string {
  const args = buildGenerator().map((arg) => (arg === DOCUMENT ? document : arg === GENERATED ? output : arg));
  execFileSync(resolve(ROOT, 'node_modules/.bin/openapi-typescript'), args, {
    cwd: ROOT,
    stdio: 'pipe',
    timeout: 60_000,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off' },
  });
  return readFileSync(output, 'utf8');
}

// The generated types are not committed (.gitignore): the console's build writes them before its tsc.
// On a clone not built yet, write them as the build would.
beforeAll(() => {
  if (!existsSync(resolve(ROOT, GENERATED))) generate(DOCUMENT, GENERATED);
}, 60_000);

/**
 * Issue 43: the console's types and calls are generated from the admin API's
 * document by the console's build, which type-checks the console against them.
 * The first tests hold the types in the tree to what the build writes from the
 * document now (a stale copy after an edit of the document: run the build).
 */
describe('the console client generated from docs/admin-openapi.yaml', () => {
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'console-client-'));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('the types in the tree are what the build writes from the document now (else: `npx nx run console:build`)', () => {
    const fresh = generate(DOCUMENT, join(scratch, 'fresh.d.ts'));
    expect(readFileSync(resolve(ROOT, GENERATED), 'utf8') === fresh, `${GENERATED} is stale`).toBe(true);
  }, 60_000);

  it('a changed document gives another file (the control: the comparison can fail)', () => {
    const changed = join(scratch, 'changed.yaml');
    const text = readFileSync(resolve(ROOT, DOCUMENT), 'utf8');
    expect(text).toContain('\npaths:\n');
    writeFileSync(
      changed,
      text.replace(
        '\npaths:\n',
        '\npaths:\n  /admin/v1/made-up:\n    get:\n      responses:\n        "204":\n          description: nothing\n',
      ),
    );
    const generated = generate(changed, join(scratch, 'changed.d.ts'));
    expect(generated).toContain('"/admin/v1/made-up"');
    expect(readFileSync(resolve(ROOT, GENERATED), 'utf8')).not.toContain('"/admin/v1/made-up"');
  }, 60_000);
});

/**
 * Small files beside the console's sources, type-checked with them under the
 * console's own tsconfig (as its build's `tsc` does): each probe uses the client
 * as a page would, one with everything documented, the others one thing each
 * that the document does not have.
 */
/** Each probe's code, and the error tsc must report at its call, line 3 of the file (none: it type-checks). */
const PROBES: Record<string, { code: string; fails?: string }> = {
  'documented.ts': {
    code: `export async function probe(agentId: string) {
  const { data } = await client.GET('/agents/{agentId}', { params: { path: { agentId } } });
  const hooks = await client.GET('/webhooks', { params: { query: { agent_id: agentId } } });
  await client.POST('/pats', { body: { label: 'probe' } });
  return [data?.tools[0]?.definition.name, hooks.data?.items[0]?.url];
}`,
  },
  'route.ts': {
    fails: 'TS2345',
    code: `export async function probe(agentId: string) {
  return client.GET('/agents/{agentId}/made-up', { params: { path: { agentId } } });
}`,
  },
  'field.ts': {
    fails: 'TS2339',
    code: `export async function probe() {
  return (await client.GET('/agents')).data?.items[0]?.made_up_count;
}`,
  },
  'query.ts': {
    fails: 'TS2353',
    code: `export async function probe() {
  return client.GET('/webhooks', { params: { query: { agent_id: 'a', made_up: 'x' } } });
}`,
  },
  'body.ts': {
    fails: 'TS2353',
    code: `export async function probe() {
  return client.POST('/pats', { body: { label: 'probe', made_up: 1 } });
}`,
  },
  'path-parameter.ts': {
    fails: 'TS2554',
    code: `export async function probe() {
  return client.GET('/agents/{agentId}');
}`,
  },
  'method.ts': {
    fails: 'TS2345',
    code: `export async function probe() {
  return client.DELETE('/agents');
}`,
  },
};

describe("the console's build type-checks every call against the generated types", () => {
  let probes: string;
  /** `file(line): TSxxxx` of every error tsc reports, the file relative to the repository. */
  let errors: string[];

  beforeAll(() => {
    // Under apps/console/.generated/ (ignored by git and lint): beside the sources, so imports resolve as a page's do.
    mkdirSync(join(CONSOLE, '.generated'), { recursive: true });
    probes = mkdtempSync(join(CONSOLE, '.generated', 'probes-'));
    writeFileSync(
      join(probes, 'tsconfig.json'),
      JSON.stringify({ extends: '../../tsconfig.json', include: ['../../src/**/*.ts', '../../src/**/*.tsx', '*.ts'] }),
    );
    for (const [name, { code }] of Object.entries(PROBES)) {
      writeFileSync(join(probes, name), `import { client } from '../../src/api';\n${code}\n`);
    }
    const tsc = spawnSync(
      resolve(ROOT, 'node_modules/.bin/tsc'),
      ['-p', join(probes, 'tsconfig.json'), '--noEmit', '--pretty', 'false'],
      { cwd: ROOT, encoding: 'utf8', timeout: 240_000 },
    );
    errors = [...tsc.stdout.matchAll(/^(.+?)\((\d+),\d+\): error (TS\d+)/gm)].map(
      (m) => `${relative(ROOT, resolve(ROOT, m[1]))}(${m[2]}): ${m[3]}`,
    );
    expect(tsc.status, tsc.stdout + tsc.stderr).not.toBe(null);
  }, 300_000);
  afterAll(() => rmSync(probes, { recursive: true, force: true }));

  const at = (name: string) => relative(ROOT, join(probes, name));

  it("the console's own sources type-check (no error outside the probes)", () => {
    expect(errors.filter((error) => !error.startsWith(relative(ROOT, probes)))).toEqual([]);
  });

  it('a page using only what the document has type-checks (the probes are set up right)', () => {
    expect(errors.filter((error) => error.startsWith(at('documented.ts')))).toEqual([]);
  });

  for (const [name, { fails }] of Object.entries(PROBES)) {
    if (!fails) continue;
    it(`${name.replace('.ts', '')}: one the document does not have is a type error (${fails})`, () => {
      // Line 1 imports the client, line 2 opens the function, line 3 is the call.
      expect(errors.filter((error) => error.startsWith(`${at(name)}(`))).toEqual([`${at(name)}(3): ${fails}`]);
    });
  }
});
