import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

const root = dirname(fileURLToPath(import.meta.url));
const libs = [
  'contracts',
  'grants',
  'bus',
  'config',
  'observability',
  'persistence',
  'runtime',
  'files-client',
  'agent-sdk',
];

/** Tests import the libs' sources (SWC keeps decorator metadata); the apps under test run from dist. */
const alias = Object.fromEntries([
  // Subpath entries before their package's own (vite matches an alias as a prefix).
  ['@mcpgw/bus/core', resolve(root, 'libs/bus/src/core.ts')],
  ...libs.map((lib) => [`@mcpgw/${lib}`, resolve(root, `libs/${lib}/src/index.ts`)]),
  ['@mcpgw/devstack', resolve(root, 'tools/devstack/src/index.ts')],
]);

const E2E = [
  'apps/*/test/**/*.e2e.spec.ts',
  'libs/*/test/**/*.e2e.spec.ts',
  'tools/*/test/**/*.e2e.spec.ts',
  'sdks/*/test/**/*.e2e.spec.ts',
];

/**
 * e2e files that measure (messages and statements per call, memory, rates,
 * latency under load, gossip timing, outage timing) or run a NATS cluster: run
 * alone, so another file's stack neither skews nor starves them. `npm start`'s
 * own tests (tools/devstack/test) take free ports, a database or data directory
 * and a bus prefix of their own, and mostly wait on a child process: they run in
 * `e2e`, two at a time (they were alone while `npm start` took fixed ports).
 */
const E2E_ALONE = [
  'apps/gateway/test/call-budget.e2e.spec.ts',
  'apps/gateway/test/load.e2e.spec.ts',
  'apps/gateway/test/faults-under-load.e2e.spec.ts',
  'apps/gateway/test/database-outage.e2e.spec.ts',
  'apps/gateway/test/files-memory.e2e.spec.ts',
  'apps/gateway/test/quotas.e2e.spec.ts',
  'apps/gateway/test/tracing.e2e.spec.ts',
  'apps/gateway/test/replica-failover.e2e.spec.ts',
  'apps/gateway/test/nats-cluster.e2e.spec.ts',
  'tools/agent-contract/test/examples.e2e.spec.ts',
];

export default defineConfig({
  plugins: [swc.vite({ module: { type: 'es6' } })],
  resolve: { alias },
  test: {
    reporters: ['default'],
    setupFiles: ['reflect-metadata'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          sequence: { groupOrder: 0 },
          include: [
            'libs/*/src/**/*.spec.ts',
            'apps/*/src/**/*.spec.ts',
            'tools/*/src/**/*.spec.ts',
            'tools/ci/test/*.spec.ts',
          ],
          // Files that start processes are the e2e project's (run one at a time there), not run twice.
          exclude: ['**/node_modules/**', '**/dist/**', '**/*.e2e.spec.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: E2E,
          exclude: ['**/node_modules/**', ...E2E_ALONE],
          // Each file boots its own stack; two at a time on two cores: a file spends much of
          // its time waiting (acks, deadlines, restarts), and two overlap those waits.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e-alone',
          include: E2E_ALONE,
          // After the others, one at a time: nothing else runs while these measure or hold fixed ports.
          fileParallelism: false,
          sequence: { groupOrder: 2 },
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
