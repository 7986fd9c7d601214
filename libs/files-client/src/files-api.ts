import { Readable } from 'node:stream';

/** How FilesApi reaches the gateway and who it is. */
export interface FilesApiOptions {
  /** The gateway, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** An agent API key (`bak_…`): files for that key's agent, usable in its tools/call. */
  apiKey?: string;
  /** Or a RuntimeGrant: files for the grant's agent and task. */
  grant?: string;
  /** Another fetch (tests, proxies); default the global one. */
  fetch?: typeof fetch;
}

export interface PresignRequest {
  filename: string;
  contentType: string;
  /** Bytes that will be uploaded. */
  size: number;
}

export interface PresignedUpload {
  file_id: string;
  /** PUT the bytes here, with the declared Content-Type, before `expires_at`. */
  upload_url: string;
  expires_at: string;
}

export interface UploadedFile {
  file_id: string;
  filename: string;
  content_type: string;
  size: number;
  /** Hex SHA-256 of the bytes, computed by the gateway as they streamed in. */
  sha256: string;
  /** When the file and its bytes are purged. */
  expires_at: string;
}

export interface UploadOptions {
  filename: string;
  contentType: string;
  /** Required for a stream (the gateway checks the bytes against it); taken from bytes otherwise. */
  size?: number;
}

/** What can be uploaded: bytes, or a stream of them (Node or web). */
export type UploadBody = Uint8Array | ArrayBuffer | Readable | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** A refusal of the gateway: HTTP status and its error code (`file_too_large`, `url_expired`…). */
export class FilesApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${status} ${code}: ${message}`);
    this.name = 'FilesApiError';
  }
}

/**
 * The gateway's files API, typed: presign an upload, then PUT the bytes to the
 * signed URL (streamed). The returned `file_id` goes into a tool call's
 * `arguments.attachments: [{file_id}]`.
 */
export class FilesApi {
  private readonly fetch: typeof fetch;
  private readonly baseUrl: string;

  constructor(private readonly options: FilesApiOptions) {
    if (!options.apiKey === !options.grant) throw new Error('FilesApi: give exactly one of apiKey and grant');
    this.fetch = options.fetch ?? fetch;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  /** `POST /api/v1/files/presign-upload`. */
  async presignUpload(request: PresignRequest): Promise<PresignedUpload> {
    const response = await this.fetch(`${this.baseUrl}/api/v1/files/presign-upload`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...this.credentials() },
      body: JSON.stringify({ filename: request.filename, content_type: request.contentType, size: request.size }),
    });
    return answer<PresignedUpload>(response);
  }

  /** Presign and upload; returns the `file_id`. */
  async upload(body: UploadBody, options: UploadOptions): Promise<string> {
    return (await this.uploadFile(body, options)).file_id;
  }

  /** Presign and upload; returns what the gateway recorded (size, sha256, expiry). */
  async uploadFile(body: UploadBody, options: UploadOptions): Promise<UploadedFile> {
    const size = options.size ?? byteLength(body);
    if (size === undefined) throw new Error('FilesApi.upload: give options.size when uploading a stream');
    const presigned = await this.presignUpload({ filename: options.filename, contentType: options.contentType, size });
    return this.put(presigned.upload_url, body, options.contentType, size);
  }

  /** PUT bytes to an upload URL (the signature in the URL is the credential). */
  async put(uploadUrl: string, body: UploadBody, contentType: string, size: number): Promise<UploadedFile> {
    const response = await this.fetch(uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': contentType, 'content-length': String(size) },
      body: requestBody(body),
      // A stream body needs half duplex in Node's fetch.
      duplex: 'half',
    } as RequestInit);
    return answer<UploadedFile>(response);
  }

  private credentials(): Record<string, string> {
    return this.options.apiKey
      ? { 'x-agent-api-key': this.options.apiKey }
      : { authorization: `Bearer ${this.options.grant}` };
  }
}

function byteLength(body: UploadBody): number | undefined {
  if (body instanceof ArrayBuffer) return body.byteLength;
  if (body instanceof Uint8Array) return body.byteLength;
  return undefined;
}

function requestBody(body: UploadBody): BodyInit {
  if (body instanceof ArrayBuffer || body instanceof Uint8Array) return body as BodyInit;
  if (body instanceof Readable) return Readable.toWeb(body) as unknown as BodyInit;
  if (typeof (body as ReadableStream).getReader === 'function') return body as ReadableStream<Uint8Array>;
  return Readable.toWeb(Readable.from(body as AsyncIterable<Uint8Array>)) as unknown as BodyInit;
}

async function answer<T>(response: Response): Promise<T> {
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (response.ok) return parsed as T;
  const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
  throw new FilesApiError(
    response.status,
    error?.code ?? 'http_error',
    error?.message ?? (text || response.statusText),
  );
}
