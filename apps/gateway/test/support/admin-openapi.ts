import { RequestMethod, type Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/** docs/admin-openapi.yaml, and what the tests check against it. */
export const ADMIN_OPENAPI_PATH = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../../../../docs/admin-openapi.yaml',
);

export interface OpenApiDoc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; responses: Record<string, Response> };
}
interface Response {
  $ref?: string;
  /** An event stream's events: the schema (in components) of each one's data. */
  'x-sse-events'?: Record<string, string>;
  content?: { 'application/json'?: { schema: unknown } };
}
interface Operation {
  operationId: string;
  /** The e2e file that answers it (when not admin-api.e2e.spec.ts). */
  'x-tested-by'?: string;
  responses: Record<string, Response>;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

export function loadAdminOpenApi(): OpenApiDoc {
  return parse(readFileSync(ADMIN_OPENAPI_PATH, 'utf8')) as OpenApiDoc;
}

/** `METHOD /path/{param}` of every operation of the document. */
export function documentedRoutes(doc: OpenApiDoc): string[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((key) => (HTTP_METHODS as readonly string[]).includes(key))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
}

/**
 * The operations an e2e file must answer 2xx at least once: those whose
 * `x-tested-by` names it (the admin API's own file: those that name none).
 */
export function routesTestedBy(doc: OpenApiDoc, file: string): string[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([key]) => (HTTP_METHODS as readonly string[]).includes(key))
      .filter(([, operation]) => (operation['x-tested-by'] ?? 'admin-api.e2e.spec.ts') === file)
      .map(([method]) => `${method.toUpperCase()} ${path}`),
  );
}

/** `METHOD /path/{param}` of every handler of these Nest controllers, read from their decorators. */
export function controllerRoutes(controllers: Type<unknown>[]): string[] {
  const join = (...parts: string[]) =>
    `/${parts
      .flatMap((part) => part.split('/'))
      .filter(Boolean)
      .join('/')}`;
  return controllers.flatMap((controller) => {
    const base = Reflect.getMetadata(PATH_METADATA, controller) as string;
    const prototype = controller.prototype as Record<string, unknown>;
    return Object.getOwnPropertyNames(prototype)
      .filter((name) => name !== 'constructor' && Reflect.hasMetadata(METHOD_METADATA, prototype[name] as object))
      .map((name) => {
        const handler = prototype[name] as object;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
        const path = join(base, Reflect.getMetadata(PATH_METADATA, handler) as string).replace(/:(\w+)/g, '{$1}');
        return `${method} ${path}`;
      });
  });
}

/**
 * Validates answers against the document's response schemas (JSON Schema
 * 2020-12, as OpenAPI 3.1 says), and remembers which operations answered 2xx.
 */
export class ResponseChecker {
  private readonly ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  private readonly compiled = new Map<string, ValidateFunction>();
  /** `METHOD /path` of the operations that gave a valid 2xx answer. */
  readonly succeeded = new Set<string>();

  constructor(private readonly doc: OpenApiDoc) {
    this.ajv.addSchema(doc as object, 'admin-openapi');
  }

  /** The problems of `body` as the answer `status` of `METHOD path` (empty: it is valid). */
  check(method: string, path: string, status: number, body: unknown): string[] {
    const operation = this.doc.paths[path]?.[method.toLowerCase()];
    if (!operation) return [`${method} ${path} is not in the document`];
    let response = operation.responses[String(status)];
    if (!response) return [`${method} ${path} documents no ${status} answer`];
    if (response.$ref) response = this.doc.components.responses[response.$ref.split('/').pop()!];
    if (!response.content?.['application/json']) return [`${method} ${path} ${status} has no JSON schema`];
    const pointer = this.pointerTo(path, method.toLowerCase(), String(status), operation.responses[String(status)]);
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: pointer });
      this.compiled.set(pointer, validate);
    }
    if (!validate(body)) {
      return (validate.errors ?? []).map((e) => `${method} ${path} ${status}: ${e.instancePath} ${e.message}`);
    }
    if (status < 300) this.succeeded.add(`${method.toUpperCase()} ${path}`);
    return [];
  }

  /**
   * The problems of one server-sent event of the 2xx event stream of `METHOD path`: its
   * name must be one the document lists, its data valid by that event's schema.
   */
  checkEvent(method: string, path: string, event: string, data: unknown): string[] {
    const response = this.doc.paths[path]?.[method.toLowerCase()]?.responses['200'];
    const schema = response?.['x-sse-events']?.[event];
    if (!schema) return [`${method} ${path}: no event ${event} in the document`];
    const pointer = `admin-openapi#/components/schemas/${schema}`;
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: pointer });
      this.compiled.set(pointer, validate);
    }
    if (!validate(data)) {
      return (validate.errors ?? []).map((e) => `${method} ${path} ${event}: ${e.instancePath} ${e.message}`);
    }
    this.succeeded.add(`${method.toUpperCase()} ${path}`);
    return [];
  }

  private pointerTo(path: string, method: string, status: string, response: Response): string {
    if (response.$ref) return `admin-openapi${response.$ref}/content/application~1json/schema`;
    const escaped = path.replaceAll('~', '~0').replaceAll('/', '~1').replaceAll('{', '%7B').replaceAll('}', '%7D');
    return `admin-openapi#/paths/${escaped}/${method}/responses/${status}/content/application~1json/schema`;
  }
}
