// @ts-check
/**
 * Lint holds the architecture: which project may import which (Nx tags), which
 * code may touch NATS and PostgreSQL directly, and the usual TypeScript rules.
 * `npm test` runs it first, so a boundary violation fails CI.
 */
import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/** Only libs/bus talks to NATS: everything else goes through its typed client. */
const natsOnlyInBus = {
  name: 'nats',
  message: 'Only libs/bus talks to NATS: use the typed BusClient and subject descriptors from @mcpgw/bus.',
};

/** Only libs/persistence, the apps' database/ folders and *.store.ts files talk SQL. */
const sqlOnlyInStores = ['pg', 'typeorm', '@nestjs/typeorm', 'kysely'].map((name) => ({
  name,
  message: 'SQL lives in libs/persistence, apps/*/src/database/ and *.store.ts files.',
}));

/** A raw publish or subscribe on a NATS connection (`nc.publish`, `this.nc.subscribe`). */
const rawNatsCalls = ['publish', 'subscribe'].flatMap((method) => [
  {
    selector: `CallExpression[callee.property.name='${method}'][callee.object.name='nc']`,
    message: `Raw nc.${method}() outside libs/bus: use the typed BusClient.`,
  },
  {
    selector: `CallExpression[callee.property.name='${method}'][callee.object.property.name='nc']`,
    message: `Raw nc.${method}() outside libs/bus: use the typed BusClient.`,
  },
]);

/** Which kind of project may depend on which (tags live in each package.json, under `nx.tags`). */
const depConstraints = [
  { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: [] },
  { sourceTag: 'type:config', onlyDependOnLibsWithTags: ['type:contracts'] },
  { sourceTag: 'type:grants', onlyDependOnLibsWithTags: ['type:contracts'] },
  { sourceTag: 'type:bus', onlyDependOnLibsWithTags: ['type:contracts'] },
  { sourceTag: 'type:persistence', onlyDependOnLibsWithTags: ['type:contracts'] },
  { sourceTag: 'type:observability', onlyDependOnLibsWithTags: ['type:contracts'] },
  // The agent SDK: published with the contracts and the bus core bundled in (libs/agent-sdk/README.md).
  { sourceTag: 'type:sdk', onlyDependOnLibsWithTags: ['type:contracts', 'type:bus'] },
  // Client libraries for the gateway's users: nothing of ours, so that anyone can import them.
  { sourceTag: 'type:client', onlyDependOnLibsWithTags: [] },
  {
    sourceTag: 'type:runtime',
    onlyDependOnLibsWithTags: ['type:contracts', 'type:config', 'type:bus', 'type:observability', 'type:persistence'],
  },
  {
    // Apps never depend on apps or tools.
    sourceTag: 'type:app',
    onlyDependOnLibsWithTags: [
      'type:contracts',
      'type:config',
      'type:grants',
      'type:bus',
      'type:persistence',
      'type:observability',
      'type:runtime',
      // The mock agent pod is an ordinary user of the agent SDK.
      'type:sdk',
      // The files API's wire shapes are the client's: the gateway answers what FilesApi reads.
      'type:client',
    ],
  },
  {
    // Tools start the apps as processes; they never import them.
    sourceTag: 'type:tool',
    onlyDependOnLibsWithTags: [
      'type:contracts',
      'type:config',
      'type:grants',
      'type:bus',
      'type:sdk',
      'type:client',
      'type:tool',
    ],
  },
  // Every app and tool may use the shared libs and its own code only.
  { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
  { sourceTag: 'scope:gateway', onlyDependOnLibsWithTags: ['scope:shared', 'scope:gateway'] },
  { sourceTag: 'scope:message-service', onlyDependOnLibsWithTags: ['scope:shared', 'scope:message-service'] },
  { sourceTag: 'scope:agent-pod', onlyDependOnLibsWithTags: ['scope:shared', 'scope:agent-pod'] },
  { sourceTag: 'scope:devstack', onlyDependOnLibsWithTags: ['scope:shared', 'scope:devstack'] },
  {
    sourceTag: 'scope:agent-contract',
    onlyDependOnLibsWithTags: ['scope:shared', 'scope:devstack', 'scope:agent-contract'],
  },
  // Examples use what a user of the product would: the published SDK.
  { sourceTag: 'type:example', onlyDependOnLibsWithTags: ['type:sdk'] },
  { sourceTag: 'scope:examples', onlyDependOnLibsWithTags: ['scope:shared'] },
  { sourceTag: 'scope:bench', onlyDependOnLibsWithTags: ['scope:shared', 'scope:devstack', 'scope:bench'] },
  // The browser console talks to the gateway over its management API only: it imports nothing of ours.
  { sourceTag: 'scope:console', onlyDependOnLibsWithTags: [] },
];

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      // Clients generated at test time (apps/gateway/test/rest-client.e2e.spec.ts), never edited.
      '**/.generated/**',
      // The console's client types, written by its build from docs/admin-openapi.yaml (apps/console/README.md).
      'apps/console/src/generated/**',
      '**/node_modules/**',
      '.nx/**',
      'coverage/**',
      'tools/conformance/**',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mts', '**/*.tsx'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        { enforceBuildableLibDependency: false, allow: [], depConstraints, banTransitiveDependencies: false },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            { ...natsOnlyInBus, allowTypeImports: true },
            ...sqlOnlyInStores.map((p) => ({ ...p, allowTypeImports: true })),
          ],
        },
      ],
      'no-restricted-syntax': ['error', ...rawNatsCalls],
    },
  },
  {
    // Application code: not even a NatsConnection type (the bus client is the only door).
    files: ['apps/*/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [natsOnlyInBus, ...sqlOnlyInStores] }],
    },
  },
  {
    // Where SQL is allowed.
    files: ['libs/persistence/src/**/*.ts', 'apps/*/src/database/**/*.ts', 'apps/*/src/**/*.store.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [natsOnlyInBus] }],
    },
  },
  {
    // The bus itself.
    files: ['libs/bus/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: sqlOnlyInStores }],
      'no-restricted-syntax': 'off',
    },
  },
  {
    // Tools and tests play every part: a rogue NATS client, a fake agent, a test database.
    files: ['tools/**/*.ts', '**/test/**/*.ts', '**/*.spec.ts', 'vitest.config.mts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': 'off',
      'no-restricted-syntax': 'off',
    },
  },
  {
    // Tests drive the apps through the dev stack (a tool); they still never import another app.
    files: ['**/test/**/*.ts', '**/*.spec.ts'],
    rules: { '@nx/enforce-module-boundaries': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
  prettier,
);
