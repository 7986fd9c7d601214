import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { FileHttpError } from './file-errors';
import { fileUuid } from './file-ids';
import { FILES_PATH, FilesService, type Download } from './files.service';

type ContentRequest = FastifyRequest<{ Params: { id: string }; Querystring: Record<string, unknown> }>;

/**
 * The signed URLs' routes, `PUT` and `GET`/`HEAD` `/api/v1/files/{id}/content`.
 * Registered on Fastify in a scope of their own, whose only body parser hands
 * the request stream over unread: an upload streams to storage and is never
 * held whole (the app's own parser reads bodies into strings, within
 * MCP_MAX_BODY_BYTES, for the MCP endpoints).
 */
@Injectable()
export class FileContentRoutes implements OnModuleInit {
  private readonly logger = new Logger(FileContentRoutes.name);

  constructor(
    private readonly files: FilesService,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    void fastify.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
      const path = `${FILES_PATH}/:id/content`;
      scope.put(path, (req, reply) => this.upload(req as ContentRequest, reply));
      // HEAD first, and our own: Fastify's automatic one would answer Content-Length: 0.
      scope.head(path, (req, reply) => this.download(req as ContentRequest, reply));
      scope.get(path, (req, reply) => this.download(req as ContentRequest, reply));
    });
  }

  private async upload(req: ContentRequest, reply: FastifyReply): Promise<void> {
    const id = req.params.id;
    const body = (req.body as Readable | undefined) ?? req.raw;
    try {
      if (!fileUuid(id)) throw new FileHttpError(404, 'file_not_found', 'no such file');
      const uploaded = await this.files.upload(
        id,
        req.query,
        { contentType: req.headers['content-type'], contentLength: req.headers['content-length'] },
        body,
      );
      await reply.status(200).send(uploaded);
    } catch (error) {
      // A refusal before the body was read: close the connection rather than read what is left of it.
      if (!body.readableEnded) reply.header('connection', 'close');
      await this.refuse(req, reply, error);
    }
  }

  private async download(req: ContentRequest, reply: FastifyReply): Promise<void> {
    try {
      if (!fileUuid(req.params.id)) throw new FileHttpError(404, 'file_not_found', 'no such file');
      const found = await this.files.download(req.params.id, req.query, req.method, req.headers.range);
      writeHeaders(reply, found);
      // No payload (HEAD, an empty file): Fastify then keeps the Content-Length set above.
      await reply.send(found.body ?? undefined);
    } catch (error) {
      await this.refuse(req, reply, error);
    }
  }

  private async refuse(req: FastifyRequest, reply: FastifyReply, error: unknown): Promise<void> {
    reply.header('x-content-type-options', 'nosniff');
    if (error instanceof FileHttpError) {
      await reply.headers(error.headers).status(error.status).send(error.body());
      return;
    }
    this.logger.error({ msg: 'file request failed', request_id: req.id, error: (error as Error).message });
    await reply
      .status(500)
      .send({ error: { code: 'internal', message: 'file storage failed', request_id: String(req.id) } });
  }
}

function writeHeaders(reply: FastifyReply, { file, range }: Download): void {
  const length = range ? range.end - range.start + 1 : file.size;
  reply
    .status(range ? 206 : 200)
    .header('content-type', file.contentType)
    .header('content-length', String(length))
    .header('content-disposition', contentDisposition(file.filename))
    // The bytes are the uploader's: a browser must take them as the declared type, never sniff HTML or script in them.
    .header('x-content-type-options', 'nosniff')
    .header('accept-ranges', 'bytes')
    .header('cache-control', 'private, no-store');
  if (file.sha256) reply.header('etag', `"${file.sha256}"`);
  if (range) reply.header('content-range', `bytes ${range.start}-${range.end}/${file.size}`);
}

/** `attachment`, with an ASCII fallback name and the exact one in RFC 5987 form. */
export function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}
