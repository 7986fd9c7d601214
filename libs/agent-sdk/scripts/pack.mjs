// Packs @mcpgw/agent-sdk for publishing: the SDK with the parts of the
// workspace's contracts and bus core it uses bundled in (one CommonJS file and
// one declaration file), and only public npm packages as dependencies, pinned
// as the workspace pins them. Usage: node libs/agent-sdk/scripts/pack.mjs [out-dir]
// (run `npm run build` first). Prints the tarball's path.
import { build } from 'esbuild';
import { generateDtsBundle } from 'dts-bundle-generator';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const root = resolve(sdk, '../..');
const out = resolve(process.argv[2] ?? join(sdk, 'pack'));
const workspace = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const own = JSON.parse(readFileSync(join(sdk, 'package.json'), 'utf8'));
const stage = mkdtempSync(join(tmpdir(), 'mcpgw-agent-sdk-'));

try {
  // Every bare import that is not ours stays an import, and becomes a dependency.
  const external = new Set();
  await build({
    // The library, and the bridge's command (`mcpgw-bridge`).
    entryPoints: { index: join(sdk, 'dist/index.js'), bridge: join(sdk, 'dist/bridge/cli.js') },
    outdir: join(stage, 'dist'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: false,
    logLevel: 'warning',
    plugins: [
      {
        name: 'public-packages-stay-external',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) => {
            if (args.path.startsWith('@mcpgw/') || args.path.startsWith('node:')) return undefined;
            const name = args.path.startsWith('@')
              ? args.path.split('/').slice(0, 2).join('/')
              : args.path.split('/')[0];
            external.add(name);
            return { path: args.path, external: true };
          });
        },
      },
    ],
  });

  const [declarations] = generateDtsBundle(
    [
      {
        filePath: join(sdk, 'src/index.ts'),
        libraries: { inlinedLibraries: ['@mcpgw/contracts', '@mcpgw/bus'] },
        output: { noBanner: true, exportReferencedTypes: false },
      },
    ],
    { preferredConfigPath: join(sdk, 'tsconfig.json') },
  );
  writeFileSync(join(stage, 'dist/index.d.ts'), declarations);

  const builtins = new Set([
    'fs',
    'path',
    'os',
    'crypto',
    'util',
    'events',
    'stream',
    'net',
    'tls',
    'url',
    'http',
    'https',
    'zlib',
    'child_process',
    'dns',
    'buffer',
    'timers',
    'worker_threads',
    'string_decoder',
    'assert',
    'perf_hooks',
    'async_hooks',
  ]);
  const dependencies = {};
  for (const name of [...external].filter((n) => !builtins.has(n)).sort()) {
    // The bridge's MCP client is a development dependency of the workspace (no app ships it).
    const version = workspace.dependencies?.[name] ?? workspace.devDependencies?.[name];
    if (!version) throw new Error(`the SDK imports ${name}, which the workspace does not depend on`);
    dependencies[name] = version;
  }
  const manifest = {
    name: own.name,
    version: own.version,
    description: own.description,
    license: own.license,
    main: 'dist/index.js',
    types: 'dist/index.d.ts',
    bin: { 'mcpgw-bridge': 'dist/bridge.js' },
    files: ['dist', 'README.md'],
    engines: own.engines,
    dependencies,
  };
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  copyFileSync(join(sdk, 'README.md'), join(stage, 'README.md'));

  mkdirSync(out, { recursive: true });
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', out], { cwd: stage, encoding: 'utf8' }),
  );
  console.log(join(out, packed[0].filename));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
