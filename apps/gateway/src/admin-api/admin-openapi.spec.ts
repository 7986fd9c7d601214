import { compileErrors, validate } from '@readme/openapi-parser';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { BusClient } from '@mcpgw/bus';
import { Kysely, PostgresDialect } from 'kysely';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_OPENAPI_PATH,
  controllerRoutes,
  documentedRoutes,
  loadAdminOpenApi,
  type OpenApiDoc,
} from '../../test/support/admin-openapi';
import { loadEnv } from '../config/gateway.env';
import type { GatewayDb } from '../database/schema';
import { ADMIN_ERROR_CODES } from './admin-api-errors';
import { createAdminApp } from './admin-api.server';
import { ADMIN_CONTROLLERS } from './admin-http.module';
import { PUBLIC } from './admin-token.guard';

/**
 * docs/admin-openapi.yaml is the management API's contract (the console and
 * scripts are written against it): it must be valid OpenAPI 3.1, and name
 * exactly the routes the API serves, each with its schemas. The e2e test
 * (apps/gateway/test/admin-api.e2e.spec.ts) checks real answers against them.
 */
describe('docs/admin-openapi.yaml', () => {
  const doc: OpenApiDoc = loadAdminOpenApi();
  let app: NestFastifyApplication;

  beforeAll(async () => {
    // The application as the gateway builds it; its pool never connects (no route is called).
    const db = new Kysely({ dialect: new PostgresDialect({ pool: new Pool({ max: 1 }) }) }) as unknown as GatewayDb;
    // Nor does its bus client (a stand-in: nothing is sent).
    app = await createAdminApp(db, loadEnv({}), {} as BusClient);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('is valid OpenAPI 3.1 (@readme/openapi-parser)', async () => {
    const result = await validate(ADMIN_OPENAPI_PATH);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect((doc as unknown as { openapi: string }).openapi).toMatch(/^3\.1\./);
  });

  it('catches an invalid document (the control)', async () => {
    const broken = structuredClone(doc) as unknown as Record<string, unknown>;
    (broken.paths as Record<string, Record<string, Record<string, unknown>>>)['/admin/v1/agents'].get.responses =
      'none';
    expect((await validate(broken as never)).valid).toBe(false);
  });

  it('names every route the API registers, and no other', () => {
    const registered = controllerRoutes(ADMIN_CONTROLLERS);
    expect(registered.length).toBeGreaterThanOrEqual(11);
    expect([...registered].sort()).toEqual([...documentedRoutes(doc)].sort());
  });

  it('reads the routes as the running application has them (each is served, under its method)', () => {
    const fastify = app.getHttpAdapter().getInstance();
    for (const route of controllerRoutes(ADMIN_CONTROLLERS)) {
      const [method, path] = route.split(' ');
      const url = path.replace(/\{(\w+)\}/g, ':$1');
      expect(fastify.hasRoute({ method: method as 'GET', url }), route).toBe(true);
    }
    expect(fastify.hasRoute({ method: 'DELETE', url: '/admin/v1/agents' })).toBe(false);
  });

  it('gives every operation a JSON schema for each answer, the 401, and every change made by session the 403', () => {
    const problems: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        const open = (operation as { security?: unknown[] }).security?.length === 0;
        // An open route (the logins) answers 401 only where it checks a credential.
        if (!open && !operation.responses['401']) problems.push(`${where}: no 401`);
        if (method !== 'get' && !open && !operation.responses['403']) problems.push(`${where}: no 403 (CSRF)`);
        for (const [status, response] of Object.entries(operation.responses)) {
          // A redirect (the OIDC login's steps) carries a Location, no body.
          if (/^3\d\d$/.test(status)) continue;
          const resolved = response.$ref
            ? doc.components.responses[response.$ref.split('/').pop()!]
            : (response as { content?: Record<string, { schema?: unknown }>; 'x-sse-events'?: Record<string, string> });
          // An event stream names the schema of each event's data instead (x-sse-events).
          const events = (response as { 'x-sse-events'?: Record<string, string> })['x-sse-events'];
          if (resolved?.content?.['text/event-stream'] && events) {
            for (const name of Object.values(events))
              if (!doc.components.schemas[name]) problems.push(`${where} ${status}: no schema ${name}`);
          } else if (!resolved?.content?.['application/json']?.schema)
            problems.push(`${where} ${status}: no JSON schema`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect((doc as unknown as { security: unknown }).security).toEqual([{ adminToken: [] }, { adminSession: [] }]);
    // The logins alone are open (token or code, OIDC's two steps, the options); only they are marked @Public.
    const open = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) => (operation as { security?: unknown[] }).security?.length === 0)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(open.sort()).toEqual([
      'GET /admin/v1/session/oidc',
      'GET /admin/v1/session/oidc/callback',
      'GET /admin/v1/session/options',
      'POST /admin/v1/session',
    ]);
    const publicHandlers = ADMIN_CONTROLLERS.flatMap((controller) =>
      Object.getOwnPropertyNames(controller.prototype)
        .filter((name) => Reflect.getMetadata(PUBLIC, (controller.prototype as Record<string, object>)[name]))
        .map((name) => `${controller.name}.${name}`),
    );
    expect(publicHandlers.sort()).toEqual([
      'OidcController.begin',
      'OidcController.callback',
      'OidcController.options',
      'SessionController.login',
    ]);
  });

  it('lists the error codes the API answers with', () => {
    const error = doc.components.schemas.Error as {
      properties: { error: { properties: { code: { enum: string[] } } } };
    };
    expect(error.properties.error.properties.code.enum).toEqual([...ADMIN_ERROR_CODES]);
  });
});
