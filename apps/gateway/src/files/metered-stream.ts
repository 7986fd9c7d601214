import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/** Thrown through the stream when more bytes arrive than were declared. */
export class TooManyBytesError extends Error {
  constructor(readonly limit: number) {
    super(`more than the declared ${limit} bytes`);
  }
}

/**
 * Passes bytes through as they come, counting and hashing them (SHA-256), and
 * fails the stream at the first byte past `limit`: nothing is ever held but
 * the chunk in hand.
 */
export class MeteredStream extends Transform {
  bytes = 0;
  private readonly hash: Hash = createHash('sha256');

  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.limit) return done(new TooManyBytesError(this.limit));
    this.hash.update(chunk);
    done(null, chunk);
  }

  /** The SHA-256 of every byte that passed (call once, at the end). */
  digest(): Buffer {
    return this.hash.digest();
  }
}
