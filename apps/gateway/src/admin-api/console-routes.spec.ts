import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HTTP_METHODS, loadAdminOpenApi, type OpenApiDoc } from '../../test/support/admin-openapi';

/** The console's sources (apps/console/src), read as text: what they call is what they say. */
const CONSOLE_SRC = resolve(__dirname, '../../../console/src');
interface Call {
  where: string;
  method: string;
  /** A literal path under /admin/v1, with `{}` for each path parameter; undefined when not a literal. */
  path?: string;
  query: string[];
}

/**
 * Every call to the management API in these sources: `client.METHOD('/path'…)`
 * or `fetchClient.METHOD(…)` (the client generated from the document, api.ts, whose base URL is /admin/v1;
 * its query parameters are typed, so the console's build checks them: see
 * console-client.spec.ts), links to `/admin/v1/…` and EventSource streams (GET).
 */
export function consoleCalls(files: Map<string, string>): Call[] {
  const calls: Call[] = [];
  for (const [name, text] of files) {
    const at = (index: number) => `${name}:${text.slice(0, index).split('\n').length}`;
    for (const match of text.matchAll(
      /\b(?:client|fetchClient)\.(GET|PUT|POST|DELETE|PATCH)\(\s*('[^']*'|`[^`]*`|[^,)]+)/g,
    )) {
      calls.push({ where: at(match.index), method: match[1], ...literal(match[2].trim()) });
    }
    for (const match of text.matchAll(/(?:href=["'`]|new EventSource\(['`])\/admin\/v1(\/[^"'`]*)/g)) {
      calls.push({ where: at(match.index), method: 'GET', ...literal(`'${match[1]}'`) });
    }
  }
  return calls;
}

/** The problems of `calls` against the document: a call it does not describe, a query parameter it does not name. */
export function undocumented(calls: Call[], doc: OpenApiDoc): string[] {
  const operations = new Map<string, { parameters?: { name?: string; in?: string; $ref?: string }[] }>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!(HTTP_METHODS as readonly string[]).includes(method)) continue;
      operations.set(`${method.toUpperCase()} ${path.replace(/\{\w+\}/g, '{}')}`, operation as never);
    }
  }
  const problems: string[] = [];
  for (const call of calls) {
    if (call.path === undefined) {
      problems.push(`${call.where}: ${call.method} with a path that is not a literal (cannot be checked)`);
      continue;
    }
    const key = `${call.method} /admin/v1${call.path}`;
    const operation = operations.get(key);
    if (!operation) {
      problems.push(`${call.where}: ${key} is not in docs/admin-openapi.yaml`);
      continue;
    }
    const named = new Set(
      (operation.parameters ?? [])
        .map((p) => parameterOf(doc, p))
        .filter((p) => p.in === 'query')
        .map((p) => p.name),
    );
    for (const name of call.query) {
      if (!named.has(name)) problems.push(`${call.where}: ${key} documents no query parameter ${name}`);
    }
  }
  return problems;
}

/** A parameter, or the one of `components.parameters` it refers to (`$ref`). */
function parameterOf(
  doc: OpenApiDoc,
  parameter: { name?: string; in?: string; $ref?: string },
): { name?: string; in?: string } {
  const ref = parameter.$ref?.replace('#/components/parameters/', '');
  const components = (doc.components as { parameters?: Record<string, { name: string; in: string }> }).parameters;
  return ref ? (components?.[ref] ?? {}) : parameter;
}

function literal(source: string): Pick<Call, 'path' | 'query'> {
  const match = /^(['`])(\/[^'`]*)\1$/.exec(source);
  if (!match || match[2].includes('${')) return { query: [] };
  const [path, query = ''] = match[2].replace(/\{\w+\}/g, '{}').split('?', 2);
  const names = [...query.matchAll(/(?:^|&)([^=&]+)=/g)].map((m) => m[1]);
  return { path, query: names };
}

function readSources(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !/\.tsx?$/.test(entry.name) || /\.spec\.tsx?$/.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(dir, path), readFileSync(path, 'utf8'));
  }
  return files;
}

/**
 * Issue 29: "every route the console and the CLI use is in the OpenAPI
 * document, with its schemas". The console is read here (every API call of its
 * sources, with its method and query parameters); admin-openapi.spec.ts checks
 * each documented operation's schemas. The CLI calls no route: it runs the same
 * operations in-process (admin/operations), which the last test holds it to.
 */
describe('the routes the console and the CLI use', () => {
  const doc = loadAdminOpenApi();
  const sources = readSources(CONSOLE_SRC);

  it('finds the console calls (the reader is not blind)', () => {
    const calls = consoleCalls(sources);
    expect(calls.length).toBeGreaterThanOrEqual(15);
    expect(calls).toContainEqual(expect.objectContaining({ method: 'POST', path: '/agents/{}/api-keys' }));
    expect(calls).toContainEqual(expect.objectContaining({ method: 'GET', path: '/webhooks' }));
    expect(calls).toContainEqual(expect.objectContaining({ method: 'POST', path: '/agents/{}/playground/calls' }));
    expect(calls).toContainEqual(expect.objectContaining({ method: 'GET', path: '/events' }));
    expect(calls).toContainEqual(expect.objectContaining({ method: 'GET', path: '/session/oidc' }));
  });

  it('every call of the console is a documented operation, under its method (a link: with its query parameters)', () => {
    expect(undocumented(consoleCalls(sources), doc)).toEqual([]);
  });

  it('fails on an undocumented call, a wrong method, an unknown query parameter, a path it cannot read (the control)', () => {
    const bogus = new Map([
      [
        'pages/bogus.tsx',
        [
          "client.POST('/agents/{agentId}/bogus', { params: { path: { agentId } } });",
          "client.DELETE('/agents');",
          '<a href="/admin/v1/webhooks?owner=x">',
          'client.GET(somePath);',
          'client.GET(`/agents/${agentId}`);',
        ].join('\n'),
      ],
    ]);
    expect(undocumented(consoleCalls(bogus), doc).sort()).toEqual([
      'pages/bogus.tsx:1: POST /admin/v1/agents/{}/bogus is not in docs/admin-openapi.yaml',
      'pages/bogus.tsx:2: DELETE /admin/v1/agents is not in docs/admin-openapi.yaml',
      'pages/bogus.tsx:3: GET /admin/v1/webhooks documents no query parameter owner',
      'pages/bogus.tsx:4: GET with a path that is not a literal (cannot be checked)',
      'pages/bogus.tsx:5: GET with a path that is not a literal (cannot be checked)',
    ]);
  });

  it('the CLI calls no route of the API: it runs the operations in-process', () => {
    const cli = resolve(__dirname, '../admin');
    const offenders = [...readSources(cli)]
      .filter(([, text]) => /\/admin\/v1|\bfetch\(/.test(text))
      .map(([name]) => name);
    expect(offenders).toEqual([]);
  });
});
