import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The lint rules that hold the architecture fire on bad code. Each case lints a
 * fixture held in memory under a path inside a project (nothing is written), so
 * no bad import is ever committed, and a clean fixture proves the rules do not
 * fire on everything.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
let eslint: ESLint;

async function rulesFiredOn(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: resolve(root, path) });
  return result.messages.map((m) => m.ruleId ?? m.message);
}

// The first lint loads the TypeScript parser: seconds on a busy machine.
describe('architecture lint rules', { timeout: 60_000 }, () => {
  beforeAll(() => {
    // @nx/enforce-module-boundaries reads the cached project graph; make sure it exists.
    execFileSync('npx', ['nx', 'show', 'projects'], {
      cwd: root,
      stdio: 'ignore',
      env: { ...process.env, NX_DAEMON: 'false' },
    });
    eslint = new ESLint({ cwd: root });
  }, 120_000);

  it('passes a clean file (the control)', async () => {
    const code = `import { BusClient } from '@mcpgw/bus';\nexport const client: BusClient | undefined = undefined;\n`;
    expect(await rulesFiredOn('apps/agent-pod/src/fixture.ts', code)).toEqual([]);
  });

  it('refuses an app importing another app', async () => {
    const code = `import { AppModule } from '@mcpgw/gateway';\nexport const m = AppModule;\n`;
    expect(await rulesFiredOn('apps/agent-pod/src/fixture.ts', code)).toContain('@nx/enforce-module-boundaries');
  });

  it('refuses a library importing a higher layer (contracts depend on nothing)', async () => {
    const code = `import { BusClient } from '@mcpgw/bus';\nexport const c = BusClient;\n`;
    expect(await rulesFiredOn('libs/contracts/src/fixture.ts', code)).toContain('@nx/enforce-module-boundaries');
  });

  it('refuses a tool importing an app', async () => {
    const code = `import { AppModule } from '@mcpgw/message-service';\nexport const m = AppModule;\n`;
    expect(await rulesFiredOn('tools/devstack/src/fixture.ts', code)).toContain('@nx/enforce-module-boundaries');
  });

  it('keeps NATS inside libs/bus', async () => {
    const code = `import { connect } from 'nats';\nexport const c = connect;\n`;
    expect(await rulesFiredOn('apps/gateway/src/calls/fixture.ts', code)).toContain(
      '@typescript-eslint/no-restricted-imports',
    );
    expect(await rulesFiredOn('libs/bus/src/fixture.ts', code)).toEqual([]);
  });

  it('refuses a raw publish or subscribe on a NATS connection outside libs/bus', async () => {
    const code = `export function f(nc: { publish(s: string): void }, self: { nc: { subscribe(s: string): void } }) {\n  nc.publish('x');\n  self.nc.subscribe('x');\n}\n`;
    const fired = await rulesFiredOn('apps/agent-pod/src/replies/fixture.ts', code);
    expect(fired.filter((rule) => rule === 'no-restricted-syntax')).toHaveLength(2);
  });

  it('keeps SQL in libs/persistence, database/ folders and stores', async () => {
    const code = `import { Kysely } from 'kysely';\nexport const k = Kysely;\n`;
    expect(await rulesFiredOn('apps/gateway/src/calls/fixture.ts', code)).toContain(
      '@typescript-eslint/no-restricted-imports',
    );
    expect(await rulesFiredOn('apps/gateway/src/sessions/fixture.store.ts', code)).toEqual([]);
    expect(await rulesFiredOn('libs/persistence/src/fixture.ts', code)).toEqual([]);
  });
});
