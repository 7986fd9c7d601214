import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HTTP_METHODS, loadAdminOpenApi, type OpenApiDoc } from '../../test/support/admin-openapi';

/** The console's sources (apps/console/src), read as text: what they call is what they say. */
const CONSOLE_SRC = resolve(__dirname, '../../../console/src');
/** The one place that passes a path it was given (useApi's GET): every caller of it is read instead. */
const GENERIC = new Set(['hooks.ts']);

interface Call {
  where: string;
  method: string;
  /** A literal path under /admin/v1, with `{}` for each interpolated segment; undefined when not a literal. */
  path?: string;
  query: string[];
}

/**
 * Every call to the management API in these sources: `api('METHOD', '/path'…)`,
 * `useApi('/path')` (GET; every path literal of its argument, as in
 * `agentId ? `/a?x=${…}` : '/a'`), and links to `/admin/v1/…` (GET).
 */
export function consoleCalls(files: Map<string, string>): Call[] {
  const calls: Call[] = [];
  for (const [name, text] of files) {
    const at = (index: number) => `${name}:${text.slice(0, index).split('\n').length}`;
    for (const match of text.matchAll(/\bapi(?:<[^(]*?>)?\(\s*'([A-Z]+)',\s*('[^']*'|`[^`]*`|[^,)]+)/g)) {
      if (GENERIC.has(name)) continue;
      calls.push({ where: at(match.index), method: match[1], ...literal(match[2].trim()) });
    }
    for (const match of text.matchAll(/\buseApi(?:<[^(]*?>)?\(/g)) {
      if (GENERIC.has(name)) continue;
      const argument = balanced(text, match.index + match[0].length);
      const literals = [...argument.matchAll(/(['`])(\/[^'`]*)\1/g)];
      if (literals.length === 0) calls.push({ where: at(match.index), method: 'GET', query: [] });
      for (const found of literals) calls.push({ where: at(match.index), method: 'GET', ...literal(found[0]) });
    }
    for (const match of text.matchAll(/href=["'`]\/admin\/v1(\/[^"'`]*)/g)) {
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
  if (!match) return { query: [] };
  // `${queryOf({ a, b: x })}` (the console's query builder) names its parameters: a=&b=.
  // A spread (`...filters`) hides them: such a path is not read (and so refused).
  let spread = false;
  const built = match[2].replace(/\$\{queryOf\(\{([^}]*)\}\)\}/g, (_, body: string) => {
    const names = body
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    spread ||= names.some((name) => name.startsWith('...'));
    return `?${names.map((name) => `${name.split(':')[0].trim()}=`).join('&')}`;
  });
  if (spread) return { query: [] };
  const [path, query = ''] = built.replace(/\$\{[^}]*\}/g, '{}').split('?', 2);
  const names = [...query.matchAll(/(?:^|&)([^=&]+)=/g)].map((m) => m[1]);
  return { path, query: names };
}

/** The text from `start` to the parenthesis that closes the one just before it. */
function balanced(text: string, start: number): string {
  let depth = 1;
  for (let i = start; i < text.length; i++) {
    if (text[i] === '(') depth++;
    if (text[i] === ')' && --depth === 0) return text.slice(start, i);
  }
  return text.slice(start);
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
    expect(calls).toContainEqual(expect.objectContaining({ method: 'GET', path: '/webhooks', query: ['agent_id'] }));
    expect(calls).toContainEqual(expect.objectContaining({ method: 'GET', path: '/session/oidc' }));
  });

  it('every call of the console is a documented operation, under its method, with its query parameters', () => {
    expect(undocumented(consoleCalls(sources), doc)).toEqual([]);
  });

  it('fails on an undocumented call, a wrong method, an unknown query parameter, a path it cannot read (the control)', () => {
    const bogus = new Map([
      [
        'pages/bogus.tsx',
        [
          "api('POST', `/agents/${seg(id)}/bogus`);",
          "api('DELETE', '/agents');",
          'useApi(`/webhooks?owner=${x}`);',
          "api('GET', somePath);",
        ].join('\n'),
      ],
    ]);
    expect(undocumented(consoleCalls(bogus), doc).sort()).toEqual([
      'pages/bogus.tsx:1: POST /admin/v1/agents/{}/bogus is not in docs/admin-openapi.yaml',
      'pages/bogus.tsx:2: DELETE /admin/v1/agents is not in docs/admin-openapi.yaml',
      'pages/bogus.tsx:3: GET /admin/v1/webhooks documents no query parameter owner',
      'pages/bogus.tsx:4: GET with a path that is not a literal (cannot be checked)',
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
