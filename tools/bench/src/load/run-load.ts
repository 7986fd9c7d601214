import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { LoadClose, LoadGo, LoadPlan, LoadReport, LoadResult } from './protocol';

/**
 * Drives one measurement from the parent: forks the load generator, waits for
 * its warm-up, calls `beforeWindow` (sample /proc and /metrics), lets it
 * measure, then calls `afterWindow` as soon as the result arrives.
 */
export async function runLoad<S>(
  plan: Omit<LoadPlan, 'type'>,
  durationMs: number,
  sample: () => Promise<S>,
): Promise<{ result: LoadResult; before: S; after: S }> {
  const child = fork(join(__dirname, 'load-generator.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = messages(child);
  try {
    child.send({ type: 'plan', ...plan } satisfies LoadPlan);
    await expect(next, 'warm', plan.warmupMs + 60_000);
    const before = await sample();
    child.send({ type: 'go', durationMs } satisfies LoadGo);
    const done = await expect(next, 'done', durationMs + 60_000);
    const after = await sample();
    child.send({ type: 'close' } satisfies LoadClose);
    await expect(next, 'closed', 30_000).catch(() => undefined);
    return { result: (done as { result: LoadResult }).result, before, after };
  } finally {
    if (child.exitCode === null) child.kill();
  }
}

type Next = () => Promise<LoadReport>;

function messages(child: ChildProcess): Next {
  const queue: LoadReport[] = [];
  const waiting: ((report: LoadReport) => void)[] = [];
  const push = (report: LoadReport) => {
    const waiter = waiting.shift();
    if (waiter) waiter(report);
    else queue.push(report);
  };
  child.on('message', (report: LoadReport) => push(report));
  child.on('exit', (code) => push({ type: 'failed', message: `load generator exited (${code})` }));
  return () => (queue.length ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiting.push(resolve)));
}

async function expect(next: Next, type: LoadReport['type'], timeoutMs: number): Promise<LoadReport> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`load generator: no '${type}' within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const report = await Promise.race([next(), timeout]);
    if (report.type === 'failed') throw new Error(report.message);
    if (report.type !== type) throw new Error(`load generator: expected '${type}', got '${report.type}'`);
    return report;
  } finally {
    clearTimeout(timer);
  }
}
