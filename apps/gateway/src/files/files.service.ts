import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { isPlaceholderSecret } from '@mcpgw/config';
import type { HoldDeadline } from '@mcpgw/persistence';
import type { PresignedUpload, UploadedFile } from '@mcpgw/files-client';
import { randomUUID } from 'node:crypto';
import { fileUuid, publicFileId } from './file-ids';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { parseRange } from './byte-range';
import { fileErrors } from './file-errors';
import { FilesStore, type FileRecord } from './files.store';
import { MeteredStream, TooManyBytesError } from './metered-stream';
import { ephemeralSigningKey, parseSigningKeys, UrlSigner, type SignedMethod } from './signed-urls';
import { FILE_STORAGE, type ByteRange, type FileStorage } from './storage/file-storage';

/** Who owns a file: the agent it is for and the caller (API key or grant task) that uploaded it. */
export interface FileOwner {
  agentId: string;
  caller: string;
}

export interface Download {
  file: FileRecord;
  range?: ByteRange;
  body: Readable | null;
}

const CONTENT_TYPE = /^[A-Za-z0-9][\w!#$&^.+-]{0,126}\/[A-Za-z0-9][\w!#$&^.+-]{0,126}(\s*;[\x20-\x7e]*)?$/;
const BAD_FILENAME = /[\u0000-\u001f\u007f/\\]/;
export const FILES_PATH = '/api/v1/files';

const UPLOAD_URL = /^\/api\/v1\/files\/[^/?]+\/content(\?|$)/;

/** The PUT of an upload URL (`file-content.routes.ts`): the one route held to FILES_UPLOAD_TIMEOUT_MS. */
export function isUpload(method: string, url: string): boolean {
  return method === 'PUT' && UPLOAD_URL.test(url);
}

/**
 * Files: presigned uploads, streamed and checked as they arrive; signed
 * downloads; the purge of expired files with their bytes. See README.md.
 */
@Injectable()
export class FilesService implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(FilesService.name);
  private readonly signer: UrlSigner;
  private readonly baseUrl: string;
  private readonly agentBaseUrl: string;
  private purgeTimer?: NodeJS.Timeout;

  constructor(
    private readonly store: FilesStore,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {
    this.signer = new UrlSigner(signingKeys(env));
    this.baseUrl = (env.FILES_PUBLIC_BASE_URL || `http://127.0.0.1:${env.GATEWAY_PORT}`).replace(/\/+$/, '');
    this.agentBaseUrl = (env.FILES_AGENT_BASE_URL || this.baseUrl).replace(/\/+$/, '');
  }

  /**
   * The storage is prepared at start, but a gateway whose object store is down
   * still starts (MCP does not need it): the next upload tries again.
   */
  onModuleInit(): void {
    this.storageReady().catch((error: Error) =>
      this.logger.warn(`file storage not ready (uploads will try again): ${error.message}`),
    );
  }

  private ready?: Promise<void>;

  private storageReady(): Promise<void> {
    this.ready ??= this.storage.init().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  onApplicationBootstrap(): void {
    this.purgeTimer = setInterval(() => void this.purgeExpired(), this.env.FILES_PURGE_INTERVAL_MS).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.purgeTimer);
  }

  /** `POST /api/v1/files/presign-upload`: a pending file and the URL to PUT its bytes to. */
  async presignUpload(owner: FileOwner, body: unknown): Promise<PresignedUpload> {
    const { filename, content_type: contentType, size } = (body ?? {}) as Record<string, unknown>;
    if (typeof filename !== 'string' || filename.length === 0 || filename.length > 255 || BAD_FILENAME.test(filename))
      throw fileErrors.invalid('filename must be 1-255 characters, without control characters or slashes');
    if (typeof contentType !== 'string' || !CONTENT_TYPE.test(contentType) || contentType.length > 255)
      throw fileErrors.invalid('content_type must be a media type, e.g. application/pdf');
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
      throw fileErrors.invalid('size must be the number of bytes to upload (an integer, 0 or more)');
    if (size > this.env.FILES_MAX_BYTES)
      throw fileErrors.tooLarge(`size ${size} is over the limit of ${this.env.FILES_MAX_BYTES} bytes`);

    const id = randomUUID();
    const expiresAt = new Date(Date.now() + this.env.FILES_UPLOAD_URL_TTL_SECONDS * 1000);
    const quota = { files: this.env.FILES_QUOTA_FILES, bytes: this.env.FILES_QUOTA_BYTES };
    const fits = await this.store.createWithinQuota({ id, ...owner, filename, contentType, size, expiresAt }, quota);
    if (!fits.ok) {
      throw fits.usage.files + 1 > quota.files
        ? fileErrors.quota(`this caller holds ${fits.usage.files} files, the most FILES_QUOTA_FILES allows`)
        : fileErrors.quota(
            `this caller holds ${fits.usage.bytes} bytes; ${size} more is over FILES_QUOTA_BYTES (${quota.bytes})`,
          );
    }
    const fileId = publicFileId(id);
    return { file_id: fileId, upload_url: this.url(fileId, 'PUT', expiresAt), expires_at: expiresAt.toISOString() };
  }

  /**
   * The PUT to an upload URL: checked (signature, content type, declared size,
   * limit) before a byte is read, then streamed to storage through a meter
   * that hashes and counts, and fails at the first byte too many.
   */
  async upload(
    fileId: string,
    query: Record<string, unknown>,
    headers: { contentType?: string; contentLength?: string },
    body: Readable,
  ): Promise<UploadedFile> {
    // The URL is signed for the id as it was handed out; the row and the bytes are the UUID's.
    this.checkUrl(query, fileId, 'PUT');
    const id = fileUuid(fileId);
    if (!id) throw fileErrors.notFound();
    const length = headers.contentLength === undefined ? undefined : Number(headers.contentLength);
    if (length !== undefined && length > this.env.FILES_MAX_BYTES)
      throw fileErrors.tooLarge(`${length} bytes is over the limit of ${this.env.FILES_MAX_BYTES} bytes`);
    const file = await this.store.find(id);
    if (!file) throw fileErrors.notFound();
    if (length !== undefined && length > file.size)
      throw fileErrors.tooLarge(`${length} bytes is more than the declared ${file.size}`);
    if (length !== undefined && length !== file.size)
      throw fileErrors.sizeMismatch(`${length} bytes sent, ${file.size} declared`);
    if (mediaType(headers.contentType) !== mediaType(file.contentType))
      throw fileErrors.contentType(`Content-Type must be the declared ${file.contentType}`);
    if (file.state === 'uploaded') throw fileErrors.conflict('the file is uploaded already');
    if (file.expiresAt.getTime() <= Date.now()) throw fileErrors.gone();
    try {
      await this.storageReady();
    } catch (error) {
      throw fileErrors.unavailable(`file storage is not reachable: ${(error as Error).message}`);
    }
    // An upload cannot outlive the HTTP request timeout: one older than that was left by a gateway that died.
    const claimed = await this.store.claimUpload(id, this.env.FILES_UPLOAD_TIMEOUT_MS + 2_000);
    if (!claimed) throw fileErrors.conflict('the file is being uploaded by another request');

    const meter = new MeteredStream(file.size);
    try {
      await Promise.all([
        this.storage.put(id, meter, file.size, file.contentType),
        // When the meter fails (a byte too many), the storage side fails too: the answer is the meter's reason.
        pipeline(body, meter),
      ]);
    } catch (error) {
      await this.storage.delete(id).catch(() => undefined);
      await this.store.releaseUpload(id);
      if (error instanceof TooManyBytesError || meter.bytes > file.size)
        throw fileErrors.tooLarge(`more bytes than the declared ${file.size}`);
      throw error;
    }
    if (meter.bytes !== file.size) {
      await this.storage.delete(id).catch(() => undefined);
      await this.store.releaseUpload(id);
      throw fileErrors.sizeMismatch(`${meter.bytes} bytes received, ${file.size} declared`);
    }
    const sha256 = meter.digest();
    const expiresAt = await this.store.completeUpload(id, sha256, this.env.FILES_TTL_SECONDS);
    if (!expiresAt) {
      // Purged while it uploaded (it expired): its bytes go too.
      await this.storage.delete(id).catch(() => undefined);
      throw fileErrors.gone();
    }
    return {
      file_id: publicFileId(id),
      filename: file.filename,
      content_type: file.contentType,
      size: file.size,
      sha256: sha256.toString('hex'),
      expires_at: expiresAt.toISOString(),
    };
  }

  /** GET (or HEAD) of a download URL: the file's metadata, the range asked for, and its bytes as a stream. */
  async download(
    fileId: string,
    query: Record<string, unknown>,
    method: string,
    rangeHeader?: string,
  ): Promise<Download> {
    this.checkUrl(query, fileId, method);
    const id = fileUuid(fileId);
    if (!id) throw fileErrors.notFound();
    const file = await this.store.find(id);
    if (!file || file.state !== 'uploaded') throw fileErrors.notFound();
    if (file.expiresAt.getTime() <= Date.now()) throw fileErrors.gone();
    const range = parseRange(rangeHeader, file.size);
    if (range === 'unsatisfiable') throw fileErrors.range(file.size);
    if (method === 'HEAD' || file.size === 0) return { file, range, body: null };
    return { file, range, body: await this.storage.get(id, range) };
  }

  /** An absolute URL the agent's pod downloads `file` from (FILES_AGENT_BASE_URL), valid FILES_DOWNLOAD_URL_TTL_SECONDS. */
  downloadUrl(uuid: string): string {
    const expiresAt = new Date(Date.now() + this.env.FILES_DOWNLOAD_URL_TTL_SECONDS * 1000);
    return this.url(publicFileId(uuid), 'GET', expiresAt, this.agentBaseUrl);
  }

  /** Files by id, for attachments (their owner and state are the caller's to check). */
  findMany(ids: string[], deadline?: HoldDeadline): Promise<FileRecord[]> {
    return this.store.findMany(ids, deadline);
  }

  /** Delete expired files, bytes first, in batches until none is left. Returns how many. */
  async purgeExpired(): Promise<number> {
    let purged = 0;
    try {
      for (let ids = await this.store.expiredBatch(); ids.length > 0; ids = await this.store.expiredBatch()) {
        for (const id of ids) await this.storage.delete(id);
        const deleted = await this.store.deleteExpired(ids);
        purged += deleted;
        if (deleted === 0) break;
      }
      if (purged) this.logger.log({ msg: 'purged expired files', purged });
    } catch (error) {
      this.logger.warn(`file purge: ${(error as Error).message}`);
    }
    return purged;
  }

  private url(fileId: string, method: SignedMethod, expiresAt: Date, base = this.baseUrl): string {
    return `${base}${FILES_PATH}/${fileId}/content?${this.signer.sign(fileId, method, expiresAt)}`;
  }

  private checkUrl(query: Record<string, unknown>, id: string, method: string): void {
    const checked = this.signer.check(query, id, method);
    if (!checked.ok) throw fileErrors.forbidden(checked.reason, checked.message);
  }
}

/** `type/subtype`, lower case, without parameters. */
function mediaType(value: string | undefined): string {
  return (value ?? '').split(';')[0].trim().toLowerCase();
}

/**
 * The URL signing keys. In production they must be set, and not the placeholder of
 * .env.example: the env check sees the variable, this one also the keys of a file it names.
 */
export function signingKeys(env: Pick<GatewayEnv, 'FILES_URL_SIGNING_KEYS' | 'NODE_ENV'>) {
  if (env.FILES_URL_SIGNING_KEYS) {
    const keys = parseSigningKeys(env.FILES_URL_SIGNING_KEYS);
    if (env.NODE_ENV === 'production' && keys.some((key) => isPlaceholderSecret(key.secret.toString('utf8')))) {
      throw new Error(
        'FILES_URL_SIGNING_KEYS holds a placeholder (as in .env.example), not a secret: NODE_ENV=production refuses it',
      );
    }
    return keys;
  }
  if (env.NODE_ENV === 'production')
    throw new Error('FILES_URL_SIGNING_KEYS must be set in production (the same on every replica)');
  new Logger(FilesService.name).warn(
    'FILES_URL_SIGNING_KEYS is not set: file URLs are signed with a key of this process only',
  );
  return [ephemeralSigningKey()];
}
