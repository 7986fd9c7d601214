import { startTestStack, workspaceRoot, type TestStack } from '@mcpgw/devstack';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = workspaceRoot();

/** A user's script in a folder of its own: upload, attach on each surface, send again with the same key. */
const USER_SCRIPT = `
import { FilesApi, callAgentTool, callTaskTool } from '@mcpgw/files-client';
const [baseUrl, agentId, apiKey, grant] = process.argv.slice(2);
const bytes = new TextEncoder().encode('%PDF-1.7 from the packed client');

const files = new FilesApi({ baseUrl, apiKey });
const fileId = await files.upload(bytes, { filename: 'upload.pdf', contentType: 'application/pdf' });
const call = { name: 'summarize_pdf', attachments: [{ file_id: fileId, filename: 'q3.pdf' }], idempotencyKey: 'user_7:q3_summary' };
const first = await callAgentTool({ baseUrl, agentId, apiKey }, call);
const again = await callAgentTool({ baseUrl, agentId, apiKey }, call);

const asTask = new FilesApi({ baseUrl, grant });
const taskFile = await asTask.upload(bytes, { filename: 'task.pdf', contentType: 'application/pdf' });
const task = await callTaskTool(
  { baseUrl, workspaceId: 'demo', agentId, grant },
  { name: 'summarize_pdf', callId: 'call_packed', attachments: [{ file_id: taskFile }] },
);
console.log(JSON.stringify({ fileId, first, again, task }));
`;

/**
 * \`npm pack\` of libs/files-client installs into an empty folder (it depends on
 * nothing), and a script written there uploads a file and attaches it on both
 * surfaces of the running stack, with an idempotency key.
 */
describe('the packed files client', () => {
  let folder: string;
  let env: TestStack;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'mcpgw-files-client-user-'));
    const { stdout } = await run('npm', ['pack', join(root, 'libs/files-client'), '--pack-destination', folder], {
      cwd: folder,
    });
    const tarball = join(folder, stdout.trim().split('\n').at(-1)!);
    writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'my-app', private: true, type: 'module' }));
    await run('npm', ['install', tarball, '--no-audit', '--no-fund', '--offline'], { cwd: folder });
    writeFileSync(join(folder, 'upload.mjs'), USER_SCRIPT);
    env = await startTestStack();
  }, 240_000);

  afterAll(async () => {
    await env?.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  it('is a package of its own: public, no dependencies, its declarations inside', () => {
    const installed = join(folder, 'node_modules/@mcpgw/files-client');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.private).toBeUndefined();
    expect(manifest.dependencies).toBeUndefined();
    expect(existsSync(join(installed, 'dist/index.d.ts'))).toBe(true);
    expect(existsSync(join(installed, 'README.md'))).toBe(true);
  });

  it('uploads and attaches on both surfaces; the same idempotency key replays the result', async () => {
    const minted = await env.stack.admin<{ grant: string }>(
      'grant',
      'mint',
      '--workspace',
      'demo',
      '--agent',
      env.agentId,
      '--task',
      'task-packed',
      '--tools',
      'summarize_pdf',
    );
    const { stdout } = await run(
      process.execPath,
      ['upload.mjs', env.gatewayUrls[0], env.agentId, env.apiKey, minted.grant],
      { cwd: folder },
    );
    const seen = JSON.parse(stdout) as {
      fileId: string;
      first: { result: { structuredContent: { files: { name: string; size: number }[] } }; replayed: boolean };
      again: { result: { structuredContent: unknown }; replayed: boolean };
      task: { result: { structuredContent: { call_id: string; output: { files: { name: string }[] } } } };
    };
    expect(seen.fileId).toMatch(/^file_[0-9a-f]{32}$/);
    expect(seen.first.replayed).toBe(false);
    expect(seen.first.result.structuredContent.files).toEqual([
      expect.objectContaining({ name: 'q3.pdf', size: '%PDF-1.7 from the packed client'.length }),
    ]);
    expect(seen.again.replayed).toBe(true);
    expect(seen.again.result.structuredContent).toEqual(seen.first.result.structuredContent);
    expect(seen.task.result.structuredContent.call_id).toBe('call_packed');
    expect(seen.task.result.structuredContent.output.files[0].name).toBe('task.pdf');
  });
});
