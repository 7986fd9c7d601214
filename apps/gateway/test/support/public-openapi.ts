import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; content?: object }> }>>;
  components: { responses: Record<string, { content?: object }> };
}

const MEDIA_TYPES = ['application/json', 'application/problem+json'];
const escape = (segment: string) =>
  segment.replaceAll('~', '~0').replaceAll('/', '~1').replaceAll('{', '%7B').replaceAll('}', '%7D');

/**
 * Answers of the public REST surface checked against its OpenAPI document (the one
 * GET /api/v1/openapi.json serves): the schema of the status and media type the
 * answer came with, JSON Schema 2020-12 as OpenAPI 3.1 says.
 */
export class PublicResponseChecker {
  private readonly ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Doc) {
    this.ajv.addSchema(doc as object, 'public-openapi');
  }

  /** The problems of `body` as the `status` answer (of media type `contentType`) of `METHOD path` (a template). */
  check(method: string, path: string, status: number, contentType: string | null, body: unknown): string[] {
    const where = `${method} ${path} ${status}`;
    const declared = this.doc.paths[path]?.[method.toLowerCase()]?.responses[String(status)];
    if (!declared) return [`${where}: not in the document`];
    const media = MEDIA_TYPES.find((type) => (contentType ?? '').startsWith(type));
    const response = declared.$ref ? this.doc.components.responses[declared.$ref.split('/').pop()!] : declared;
    if (!media || !(response.content && media in response.content)) return [`${where}: no schema for ${contentType}`];
    const base = declared.$ref
      ? `public-openapi${declared.$ref}`
      : `public-openapi#/paths/${escape(path)}/${method.toLowerCase()}/responses/${status}`;
    const pointer = `${base}/content/${escape(media)}/schema`;
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: pointer });
      this.compiled.set(pointer, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${where}: ${e.instancePath} ${e.message}`);
  }
}
