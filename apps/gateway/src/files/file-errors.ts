/**
 * What the file endpoints answer when they refuse: an HTTP status and a code
 * (the body is `{"error": {"code", "message"}}`), made in one place, here.
 */
export class FileHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'FileHttpError';
  }

  body(): { error: { code: string; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

export const fileErrors = {
  unauthorized: (reason: string) => new FileHttpError(401, 'unauthorized', reason),
  invalid: (message: string) => new FileHttpError(400, 'invalid_request', message),
  /** A signed URL refused: the code names why (url_tampered, url_expired, url_foreign_file…). */
  forbidden: (reason: string, message: string) => new FileHttpError(403, `url_${reason}`, message),
  notFound: () => new FileHttpError(404, 'file_not_found', 'no such file (it may have expired and been purged)'),
  conflict: (message: string) => new FileHttpError(409, 'file_state', message),
  gone: () => new FileHttpError(410, 'file_expired', 'the file has expired'),
  tooLarge: (message: string) => new FileHttpError(413, 'file_too_large', message),
  /** The caller's live files (uploaded, or presigned and not expired) are at FILES_QUOTA_FILES or FILES_QUOTA_BYTES. */
  quota: (message: string) =>
    new FileHttpError(429, 'file_quota_exceeded', `${message}: wait for files to expire, or use fewer`),
  contentType: (message: string) => new FileHttpError(415, 'content_type_mismatch', message),
  sizeMismatch: (message: string) => new FileHttpError(400, 'size_mismatch', message),
  unavailable: (message: string) => new FileHttpError(503, 'storage_unavailable', message),
  range: (size: number) =>
    new FileHttpError(416, 'range_not_satisfiable', 'the requested range is outside the file', {
      'content-range': `bytes */${size}`,
    }),
};
