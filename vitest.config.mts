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
          include: [
            'apps/*/test/**/*.e2e.spec.ts',
            'libs/*/test/**/*.e2e.spec.ts',
            'tools/*/test/**/*.e2e.spec.ts',
            'sdks/*/test/**/*.e2e.spec.ts',
          ],
          // Each file boots its own stack; on two cores, one file at a time.
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
