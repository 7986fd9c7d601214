import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { workspaceRoot } from './stack';

/** The Python SDK's folder (`sdks/python`). */
export function pythonSdkDir(): string {
  return join(workspaceRoot(), 'sdks', 'python');
}

/** Where the tests' virtualenv lives: `.data/python-venv` (gitignored). */
export function pythonVenvDir(): string {
  return join(workspaceRoot(), '.data', 'python-venv');
}

export interface PythonVenv {
  dir: string;
  /** The venv's interpreter. */
  python: string;
}

/**
 * The virtualenv the Python SDK's tests run in, made if missing (`python3 -m
 * venv`, then `pip install ./sdks/python pytest pytest-asyncio mcp==2.3.0
 * httpx`), and the SDK reinstalled when its sources changed since:
 * `sdks/python/make-venv.sh` does it (`.ci/run` runs the same script).
 */
export function ensurePythonVenv(dir = pythonVenvDir()): Promise<PythonVenv> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      [join(pythonSdkDir(), 'make-venv.sh'), dir],
      { timeout: 10 * 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`making the Python venv failed: ${stderr || stdout || error.message}`));
        else resolve({ dir, python: join(dir, 'bin', 'python') });
      },
    );
  });
}
