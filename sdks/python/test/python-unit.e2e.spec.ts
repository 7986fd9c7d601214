import { ensurePythonVenv, pythonSdkDir } from '@mcpgw/devstack';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Runs a program to its end: its exit code and output (never rejects). */
function run(
  file: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      {
        cwd: options.cwd,
        env: { ...process.env, ...options.env },
        timeout: options.timeoutMs ?? 300_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

describe('the Python SDK (sdks/python)', () => {
  it('passes its pytest unit tests', async () => {
    const { python } = await ensurePythonVenv();
    const { code, output } = await run(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], {
      cwd: pythonSdkDir(),
    });
    // On failure the assertion shows pytest's own report.
    expect({ code, output }).toMatchObject({ code: 0 });
    expect(output).toMatch(/\d+ passed/);
  }, 600_000);

  it('type-checks: mypy --strict over the package and the contract agent (it ships py.typed)', async () => {
    const { python } = await ensurePythonVenv();
    const { code, output } = await run(
      python,
      ['-m', 'mypy', '--strict', '--no-incremental', 'src/mcpgw_agent', 'tests/contract_agent.py'],
      { cwd: pythonSdkDir() },
    );
    expect({ code, output }).toMatchObject({ code: 0 });
  }, 600_000);

  it('installs with pip into a fresh virtualenv and imports', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcpgw-agent-venv-'));
    try {
      const venv = await run('python3', ['-m', 'venv', join(dir, 'venv')]);
      expect(venv).toMatchObject({ code: 0 });
      const bin = join(dir, 'venv', 'bin');
      // PIP_RETRIES=0: an unreachable index is tried once (see sdks/python/make-venv.sh).
      const install = await run(join(bin, 'pip'), ['install', '-q', pythonSdkDir()], {
        env: { PIP_RETRIES: process.env.PIP_RETRIES ?? '0', PIP_DISABLE_PIP_VERSION_CHECK: '1' },
      });
      expect(install).toMatchObject({ code: 0 });
      const imported = await run(join(bin, 'python'), [
        '-c',
        'import mcpgw_agent, importlib.resources as r; print(mcpgw_agent.__version__, r.files("mcpgw_agent").joinpath("py.typed").is_file())',
      ]);
      expect(imported).toMatchObject({ code: 0 });
      expect(imported.output.trim()).toBe('0.1.0 True');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);
});
