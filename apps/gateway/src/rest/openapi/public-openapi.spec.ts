import { compileErrors, validate } from '@readme/openapi-parser';
import { Controller, Get, type Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';
import { describe, expect, it } from 'vitest';
import { controllerRoutes, documentedRoutes, type OpenApiDoc } from '../../../test/support/admin-openapi';
import { AppModule } from '../../app.module';
import { PROBLEM_CONTENT_TYPE } from '../problems';
import { PUBLIC_OPENAPI } from './public-openapi';

/**
 * The routes of the public port that this document leaves to others, each with why. A route
 * the application adds must be documented, or named here.
 */
const NOT_IN_THIS_DOCUMENT: Record<string, string> = {
  'POST /{}/mcp': 'surface A, MCP Streamable HTTP: the MCP specification is its contract',
  'GET /{}/mcp': 'surface A (its SSE stream)',
  'DELETE /{}/mcp': 'surface A (ends a session)',
  'POST /workspaces/{}/agents/{}/mcp/http': 'surface B, MCP over a RuntimeGrant',
  'GET /.well-known/oauth-protected-resource/{}/mcp': 'RFC 9728 metadata of the MCP endpoints',
  'GET /a2a/{}/.well-known/agent-card.json': "A2A: the agent card is the surface's own contract (docs/a2a.md)",
  'POST /a2a/{}': 'A2A JSON-RPC binding: the A2A specification is its contract',
  'ALL /a2a/{}/rest/*': 'A2A HTTP+JSON binding: the A2A specification is its contract',
  'GET /workspaces/{}/agents/{}/a2a/.well-known/agent-card.json': 'A2A over a RuntimeGrant: its card',
  'POST /workspaces/{}/agents/{}/a2a': 'A2A JSON-RPC over a RuntimeGrant',
  'ALL /workspaces/{}/agents/{}/a2a/rest/*': 'A2A HTTP+JSON over a RuntimeGrant',
};

/** Every HTTP controller the public application mounts: AppModule's imports, followed all the way. */
function publicControllers(root: Type<unknown>): Type<unknown>[] {
  const seen = new Set<unknown>();
  const controllers = new Set<Type<unknown>>();
  const visit = (entry: unknown): void => {
    if (!entry) return;
    const forward = (entry as { forwardRef?: () => unknown }).forwardRef;
    if (forward) return visit(forward());
    const dynamic = entry as { module?: Type<unknown>; controllers?: Type<unknown>[]; imports?: unknown[] };
    const module = typeof entry === 'function' ? (entry as Type<unknown>) : dynamic.module;
    if (!module) return;
    const key = typeof entry === 'function' ? entry : dynamic;
    if (seen.has(key)) return;
    seen.add(key);
    const read = (name: string) => (Reflect.getMetadata(name, module) as unknown[] | undefined) ?? [];
    for (const c of [...read(MODULE_METADATA.CONTROLLERS), ...(dynamic.controllers ?? [])])
      controllers.add(c as Type<unknown>);
    for (const i of [...read(MODULE_METADATA.IMPORTS), ...(dynamic.imports ?? [])]) visit(i);
  };
  visit(root);
  return [...controllers];
}

/** `METHOD /a/{}/b`: a route with its parameters unnamed (the code says `:agentId`, the document `{agent_id}`). */
const shape = (route: string) => route.replace(/\{[^}]+\}/g, '{}');

/** What the document lacks (served, undocumented) and what it names that is not served. */
function differences(controllers: Type<unknown>[], doc: OpenApiDoc) {
  const served = controllerRoutes(controllers)
    .map(shape)
    .filter((route) => !(route in NOT_IN_THIS_DOCUMENT));
  const documented = documentedRoutes(doc).map(shape);
  return {
    undocumented: served.filter((route) => !documented.includes(route)).sort(),
    unserved: documented.filter((route) => !served.includes(route)).sort(),
  };
}

const doc = PUBLIC_OPENAPI as unknown as OpenApiDoc;

describe('the public OpenAPI document (GET /api/v1/openapi.json)', () => {
  it('is valid OpenAPI 3.1 (@readme/openapi-parser)', async () => {
    const result = await validate(structuredClone(PUBLIC_OPENAPI) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(PUBLIC_OPENAPI.openapi).toMatch(/^3\.1\./);
  });

  it('names every route the public application registers, and no other', () => {
    const controllers = publicControllers(AppModule);
    expect(controllers.length).toBeGreaterThanOrEqual(8);
    expect(differences(controllers, doc)).toEqual({ undocumented: [], unserved: [] });
    // The routes left to others are served: the list does not outlive them.
    const served = controllerRoutes(controllers).map(shape);
    for (const route of Object.keys(NOT_IN_THIS_DOCUMENT)) expect(served, route).toContain(route);
    expect(documentedRoutes(doc).length).toBeGreaterThanOrEqual(15);
  });

  it('tells a route added without the document, and a documented route no longer served (the control)', () => {
    @Controller('api/v1/agents/:agentId')
    class Added {
      @Get('secrets')
      secrets() {}
    }
    const controllers = [...publicControllers(AppModule), Added];
    expect(differences(controllers, doc).undocumented).toEqual(['GET /api/v1/agents/{}/secrets']);
    const fewer = publicControllers(AppModule).filter((c) => c.name !== 'CallsController');
    expect(differences(fewer, doc).unserved).toEqual(['DELETE /api/v1/calls/{}', 'GET /api/v1/calls/{}']);
  });

  it('answers every failure of the REST surface as a problem, and every operation but this document needs a credential', () => {
    const problems: string[] = [];
    const responses = PUBLIC_OPENAPI.components.responses as Record<string, { content?: Record<string, unknown> }>;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        const open = (operation as { security?: unknown[] }).security?.length === 0;
        if (open !== (path === '/api/v1/openapi.json')) problems.push(`${where}: open is ${open}`);
        if (!open && !operation.responses['401']) problems.push(`${where}: no 401`);
        const rest = /\/(invoke|tools)$|^\/api\/v1\/calls\//.test(path);
        for (const [status, response] of Object.entries(operation.responses)) {
          if (!/^[45]/.test(status) || !rest) continue;
          const resolved = response.$ref ? responses[response.$ref.split('/').pop()!] : response;
          if (!resolved.content?.[PROBLEM_CONTENT_TYPE]) problems.push(`${where} ${status}: not a problem`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(Object.keys(PUBLIC_OPENAPI.components.securitySchemes).sort()).toEqual([
      'agentApiKey',
      'oauth',
      'runtimeGrant',
    ]);
  });
});
