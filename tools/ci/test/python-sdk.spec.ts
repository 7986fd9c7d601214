import { ensurePythonVenv } from '@mcpgw/devstack';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * The Python SDK's shape (issue 43): strict pyright finds no error in
 * sdks/python/src, no module is longer than 400 lines, the modules import each
 * other without a cycle, and the README maps every module to the AsyncAPI
 * operations it implements. Negative controls: a file with an unannotated
 * parameter is an error under the same configuration (strict, and the venv's
 * nats-py resolves), and the cycle finder finds the cycles of small synthetic
 * packages (a direct one, one through a sub-package's `__init__.py`) and none
 * in an acyclic one.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const sdk = join(root, 'sdks', 'python');
const src = join(sdk, 'src');
const cycleFinder = join(sdk, 'scripts', 'import_cycles.py');
const MAX_LINES = 400;

/** Runs a program to its end: its exit code and output (never rejects). */
function run(file: string, args: string[], cwd = root): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(file, args, { cwd, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

function pythonFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.py') && !path.split('/').includes('__pycache__'))
    .map((path) => join(dir, path))
    .sort();
}

interface PyrightDiagnostic {
  file: string;
  severity: 'error' | 'warning' | 'information';
  message: string;
  rule?: string;
  range: { start: { line: number } };
}
interface PyrightReport {
  version: string;
  generalDiagnostics: PyrightDiagnostic[];
  summary: { filesAnalyzed: number; errorCount: number };
}

/** `pyright --outputjson` with the SDK's configuration (sdks/python/pyproject.toml), on its src or on `files`. */
async function pyright(files: string[] = []): Promise<PyrightReport> {
  const { stdout, stderr } = await run('npx', ['--no-install', 'pyright', '--outputjson', '-p', sdk, ...files]);
  try {
    return JSON.parse(stdout) as PyrightReport;
  } catch {
    throw new Error(`pyright gave no report: ${stderr || stdout}`);
  }
}

const errorsOf = (report: PyrightReport) =>
  report.generalDiagnostics
    .filter((d) => d.severity === 'error')
    .map((d) => `${relative(root, d.file)}:${d.range.start.line + 1} ${d.message} (${d.rule ?? 'no rule'})`);

interface ImportGraph {
  modules: string[];
  edges: [string, string][];
  cycles: string[][];
}

async function importGraph(dir: string): Promise<ImportGraph> {
  const { code, stdout, stderr } = await run('python3', [cycleFinder, dir]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(stdout) as ImportGraph;
}

/** A package made of `files` (path → source) in a temporary folder; returns the folder. */
function syntheticPackage(base: string, name: string, files: Record<string, string>): string {
  const dir = join(base, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe('the Python SDK (sdks/python/src)', () => {
  const files = pythonFiles(src);
  let scratch: string;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'python-sdk-shape-'));
    // pyright resolves nats-py, PyNaCl and httpx in the venv (made once; later runs only check it).
    await ensurePythonVenv();
  }, 600_000);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('has its modules where the test looks (a guard against checking nothing)', () => {
    expect(files.length).toBeGreaterThan(20);
    expect(files).toContain(join(src, 'mcpgw_agent', 'agent.py'));
  });

  it('type-checks under pyright strict with 0 errors, every module analyzed', async () => {
    const report = await pyright();
    expect(errorsOf(report)).toEqual([]);
    expect(report.summary.errorCount).toBe(0);
    expect(report.summary.filesAnalyzed).toBe(files.length);
  }, 300_000);

  it('negative control: under the same configuration an unannotated parameter is an error, and nats resolves', async () => {
    const control = join(scratch, 'control.py');
    writeFileSync(control, 'import nats.errors\n\n\ndef echo(x):\n    return x, nats.errors.Error\n');
    const report = await pyright([control]);
    const rules = report.generalDiagnostics.map((d) => d.rule);
    expect(rules).toContain('reportMissingParameterType');
    expect(rules).not.toContain('reportMissingImports');
  }, 300_000);

  it(`has no module longer than ${MAX_LINES} lines`, () => {
    const lengths = files.map((file) => ({
      module: relative(src, file),
      lines: readFileSync(file, 'utf8').split('\n').length - 1,
    }));
    expect(lengths.filter(({ lines }) => lines > MAX_LINES)).toEqual([]);
    expect(Math.max(...lengths.map(({ lines }) => lines))).toBeGreaterThan(100); // counted, not all empty
  });

  it('has no import cycle among its modules', async () => {
    const graph = await importGraph(src);
    expect(graph.modules.length).toBe(files.length);
    expect(graph.edges.length).toBeGreaterThan(files.length); // the imports were read
    expect(graph.cycles).toEqual([]);
  }, 60_000);

  it('negative control: the cycle finder finds a direct cycle, and one through a package __init__', async () => {
    const direct = syntheticPackage(scratch, 'direct', {
      'pkg/__init__.py': '',
      'pkg/a.py': 'from .b import B\nA = 1\n',
      'pkg/b.py': 'from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\nB = 2\n',
    });
    expect((await importGraph(direct)).cycles).toEqual([['pkg.a', 'pkg.b']]);

    // pkg.ctx imports pkg.sub.helpers, which runs pkg/sub/__init__.py first, which imports the runner, which imports pkg.ctx.
    const viaInit = syntheticPackage(scratch, 'via-init', {
      'pkg/__init__.py': '',
      'pkg/ctx.py': 'from .sub.helpers import h\n',
      'pkg/sub/__init__.py': 'from .runner import go\n',
      'pkg/sub/helpers.py': 'def h() -> None: ...\n',
      'pkg/sub/runner.py': 'from ..ctx import h\n\ndef go() -> None: ...\n',
    });
    expect((await importGraph(viaInit)).cycles).toEqual([['pkg.ctx', 'pkg.sub', 'pkg.sub.runner']]);

    // The same modules with an empty sub-package __init__: no cycle (and a module under its own package is none).
    const acyclic = syntheticPackage(scratch, 'acyclic', {
      'pkg/__init__.py': 'from .ctx import h\n',
      'pkg/ctx.py': 'from .sub.helpers import h\n',
      'pkg/sub/__init__.py': '',
      'pkg/sub/helpers.py': 'def h() -> None: ...\n',
      'pkg/sub/runner.py': 'from ..ctx import h\n\ndef go() -> None: ...\n',
    });
    const graph = await importGraph(acyclic);
    expect(graph.cycles).toEqual([]);
    expect(graph.edges).toContainEqual(['pkg.ctx', 'pkg.sub']);
  }, 60_000);

  it("README's module table names every module, and only AsyncAPI operations, each of them at least once", () => {
    const readme = readFileSync(join(sdk, 'README.md'), 'utf8');
    const section = readme.split(/^## /m).find((part) => part.startsWith('Modules'));
    expect(section, 'sdks/python/README.md needs a "## Modules" section').toBeDefined();
    const rows = (section ?? '')
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split('|').map((cell) => cell.trim()));
    const named = new Set(rows.map((cells) => cells[1].replace(/`/g, '')));
    const modules = files
      .map((file) => relative(join(src, 'mcpgw_agent'), file))
      .filter((path) => !path.endsWith('__init__.py') || path === '__init__.py');
    expect(modules.filter((module) => !named.has(module))).toEqual([]);
    expect([...named].filter((module) => !modules.includes(module))).toEqual([]);

    const operations = Object.keys(
      (parse(readFileSync(join(root, 'docs', 'asyncapi.yaml'), 'utf8')) as { operations: Record<string, unknown> })
        .operations,
    );
    const cited = rows.flatMap((cells) => [...(cells[3] ?? '').matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1]));
    expect(cited.filter((id) => !operations.includes(id))).toEqual([]);
    expect(operations.filter((id) => !cited.includes(id))).toEqual([]);
  });
});
