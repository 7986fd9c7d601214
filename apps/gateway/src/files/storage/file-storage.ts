import type { Readable } from 'node:stream';

/** A byte range of a file, both ends included (as HTTP `Range` says it). */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Where the bytes of uploaded files live. Metadata (owner, size, sha256…) is
 * PostgreSQL's (`../files.store.ts`); a backend only stores and streams bytes
 * under a key, and never holds a whole file in memory.
 */
export interface FileStorage {
  /** Store `body` (exactly `size` bytes) under `key`; rejects, storing nothing, when `body` fails. */
  put(key: string, body: Readable, size: number, contentType: string): Promise<void>;
  /** The bytes of `key` (or of `range` of them), as a stream. */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** Remove `key`; a key already gone is no error. */
  delete(key: string): Promise<void>;
  /** Ready to serve (the directory exists, the bucket is reachable). */
  init(): Promise<void>;
}

export const FILE_STORAGE = Symbol('FILE_STORAGE');
