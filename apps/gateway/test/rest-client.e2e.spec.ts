import { startTestStack, type TestStack } from '@mcpgw/devstack';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PublicResponseChecker } from './support/public-openapi';
import type { PublicClient } from './support/public-client';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
/** Gitignored: the client's types, generated anew each run. */
const generated = resolve(here, '.generated');

/**
 * The public REST surface through a client generated from the document it serves
 * (openapi-typescript, openapi-fetch), as a user would build one: the document is
 * fetched from the running gateway, turned into types, the client's use of them
 * type-checked with tsc, then called. Every answer is also checked against the document.
 */
describe('a client generated from GET /api/v1/openapi.json', () => {
  let env: TestStack;
  let base: string;
  let client: PublicClient;
  let checker: PublicResponseChecker;
  let calls: typeof import('./support/public-client');

  beforeAll(async () => {
    env = await startTestStack();
    base = env.gatewayUrls[0];
    rmSync(generated, { recursive: true, force: true });
    mkdirSync(generated, { recursive: true });
    execFileSync(
      resolve(root, 'node_modules/.bin/openapi-typescript'),
      [`${base}/api/v1/openapi.json`, '--output', resolve(generated, 'public-api.d.ts')],
      { cwd: root, stdio: 'pipe', timeout: 60_000, env: { ...process.env, REDOCLY_TELEMETRY: 'off' } },
    );
    calls = await import('./support/public-client');
    client = calls.publicClient(base, env.apiKey);
    checker = new PublicResponseChecker(await (await fetch(`${base}/api/v1/openapi.json`)).json());
  });

  afterAll(async () => {
    await env?.stop();
  });

  it('is served open and cacheable, as JSON', async () => {
    const response = await fetch(`${base}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(((await response.json()) as { openapi: string }).openapi).toBe('3.1.0');
  });

  it('type-checks: the generated types and the client written against them (tsc --noEmit)', () => {
    const tsc = resolve(root, 'node_modules/.bin/tsc');
    const run = () =>
      execFileSync(tsc, ['-p', resolve(here, 'rest-client.tsconfig.json')], { cwd: root, encoding: 'utf8' });
    expect(run).not.toThrow();
  });

  it('invokes echo', async () => {
    const answer = await calls.invoke(client, env.agentId, 'echo', { text: 'typed hello' });
    expect(answer.status).toBe(200);
    expect(answer.result).toMatchObject({ is_error: false, output: { text: 'typed hello' } });
    expect(answer.result?.call_id).toMatch(/^call_[0-9a-f]{32}$/);
    const path = '/api/v1/agents/{agent_id}/invoke';
    expect(checker.check('POST', path, answer.status, answer.contentType, answer.result)).toEqual([]);
  });

  it('invokes web_search, its structured results as output', async () => {
    const answer = await calls.invoke(client, env.agentId, 'web_search', { query: 'nats', max_results: 2 });
    expect(answer.status).toBe(200);
    expect((answer.result?.output as { results: unknown[] }).results).toHaveLength(2);
    const path = '/api/v1/agents/{agent_id}/invoke';
    expect(checker.check('POST', path, answer.status, answer.contentType, answer.result)).toEqual([]);
  });

  it('gets an unknown tool as a 404 problem, and invalid arguments as a 422 problem with their errors', async () => {
    const path = '/api/v1/agents/{agent_id}/invoke';
    const unknown = await calls.invoke(client, env.agentId, 'no_such_tool', {});
    expect(unknown.status).toBe(404);
    expect(unknown.contentType).toMatch(/^application\/problem\+json/);
    expect(unknown.problem).toMatchObject({ type: 'urn:mcpgw:problem:tool-not-found', status: 404, code: -32601 });
    expect(checker.check('POST', path, 404, unknown.contentType, unknown.problem)).toEqual([]);

    const invalid = await calls.invoke(client, env.agentId, 'web_search', { query: 42 });
    expect(invalid.status).toBe(422);
    expect(invalid.problem).toMatchObject({ type: 'urn:mcpgw:problem:invalid-arguments', code: -32602 });
    expect(checker.check('POST', path, 422, invalid.contentType, invalid.problem)).toEqual([]);
  });

  it('is refused with a 401 problem on a wrong key', async () => {
    const answer = await calls.invoke(calls.publicClient(base, 'bak_wrong'), env.agentId, 'echo', { text: 'x' });
    expect(answer.status).toBe(401);
    expect(answer.problem).toMatchObject({ type: 'urn:mcpgw:problem:unauthorized', status: 401 });
    const path = '/api/v1/agents/{agent_id}/invoke';
    expect(checker.check('POST', path, 401, answer.contentType, answer.problem)).toEqual([]);
  });

  it('lists the tools, echo and web_search among them', async () => {
    const answer = await calls.listTools(client, env.agentId);
    expect(answer.status).toBe(200);
    expect(answer.names).toEqual(expect.arrayContaining(['echo', 'web_search']));
    const path = '/api/v1/agents/{agent_id}/tools';
    expect(checker.check('GET', path, 200, answer.contentType, answer.data)).toEqual([]);
  });

  it('the checker catches an answer the document does not allow (the control)', () => {
    const path = '/api/v1/agents/{agent_id}/invoke';
    expect(checker.check('POST', path, 200, 'application/json', { call_id: 1 })).not.toEqual([]);
    expect(checker.check('POST', path, 404, 'application/json', {})).not.toEqual([]);
  });
});
