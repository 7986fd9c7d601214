import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ByteRange, FileStorage } from './file-storage';

/**
 * Files in a directory (FILES_DIR), one per key. A file is written under a
 * temporary name and renamed once complete, so a reader never sees half of it.
 */
export class LocalFileStorage implements FileStorage {
  private readonly dir: string;

  constructor(dir: string) {
    this.dir = resolve(dir);
  }

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  async put(key: string, body: Readable, _size: number, _contentType: string): Promise<void> {
    const path = this.pathOf(key);
    const partial = `${path}.part`;
    try {
      await pipeline(body, createWriteStream(partial, { flags: 'w' }));
      await rename(partial, path);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const stream = createReadStream(this.pathOf(key), range ? { start: range.start, end: range.end } : {});
    // Surface a missing file here (as a rejection), not as a stream error after the headers are sent.
    await new Promise<void>((ok, fail) => stream.once('open', () => ok()).once('error', fail));
    return stream;
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
    await rm(`${this.pathOf(key)}.part`, { force: true });
  }

  /** Keys are file ids (UUIDs): checked anyway, so that no key can leave the directory. */
  private pathOf(key: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(key)) throw new Error(`not a storage key: ${key}`);
    return join(this.dir, key);
  }
}
