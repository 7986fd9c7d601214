import { Controller, Get, Header } from '@nestjs/common';
import { PUBLIC_OPENAPI } from './public-openapi';

/** Serialized once: the document is a constant of the build. */
const DOCUMENT = JSON.stringify(PUBLIC_OPENAPI);

/**
 * `GET /api/v1/openapi.json`: the public REST surface's OpenAPI document. Open
 * (no credential: it names routes and shapes, no secret) and cacheable: it
 * changes only with the gateway's version.
 */
@Controller('api/v1')
export class OpenApiController {
  @Get('openapi.json')
  @Header('content-type', 'application/json; charset=utf-8')
  @Header('cache-control', 'public, max-age=3600')
  document(): string {
    return DOCUMENT;
  }
}
