import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { CacheInvalidationService } from '../cache/cache-invalidation.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { STREAM_CHANNEL } from '../database/database';
import { parseEventId } from './event-ids';
import { StreamStore, type StreamKind } from './streams.store';

/** A connection holds its stream this long without renewing (a replica that dies frees it after this). */
const LEASE_MS = 15_000;
const RENEW_EVERY_MS = 5_000;
/** The purge runs this often, or twice per SSE_REPLAY_TTL_SECONDS when that is shorter. */
const PURGE_EVERY_MS = 60_000;

/**
 * What an `SseStream` of a session writes its events through, in order:
 * stored (within the bounds), so the stream can be resumed anywhere.
 */
export interface StreamRecorder {
  readonly streamId: string;
  record(seq: number, data: string): void;
  /** The stream is complete (a request's response went out): a resume replays and ends. */
  end(): void;
  /** No connection serves the stream any more (it may be resumed): resolves once stored, after every event before it. */
  detach(): Promise<void>;
}

export type Resumption =
  { ok: true; streamId: string; kind: StreamKind; ended: boolean } | { ok: false; status: 404 | 409; reason: string };

/**
 * Resumable SSE streams of sessions (streams/README.md): each event of a
 * session stream is stored in PostgreSQL, and a GET with `Last-Event-ID` on
 * any replica replays what the stream sent after it, then follows the writer
 * (heard through NOTIFY) until the stream ends. One connection per stream.
 */
@Injectable()
export class ResumableStreams implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(ResumableStreams.name);
  /** Streams a connection on this replica holds: their leases are renewed. */
  private readonly attached = new Set<string>();
  /** Resumed streams on this replica waiting for their writer's next event. */
  private readonly waiting = new Map<string, Set<() => void>>();
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly store: StreamStore,
    /** Its LISTEN connection, the replica's only one, carries the streams' notices too. */
    private readonly listener: CacheInvalidationService,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.listener.listen(
      STREAM_CHANNEL,
      (streamId) => this.wake(streamId),
      // Notices may have been lost: every waiting stream looks again.
      () => this.wakeAll(),
    );
    this.timers.push(
      setInterval(() => void this.renew(), RENEW_EVERY_MS).unref(),
      setInterval(
        () => void this.purge(),
        Math.min(PURGE_EVERY_MS, (this.env.SSE_REPLAY_TTL_SECONDS * 1000) / 2),
      ).unref(),
    );
  }

  onApplicationShutdown(): void {
    for (const timer of this.timers) clearInterval(timer);
  }

  /**
   * A new stream of the session, held by the connection that opens it. Its
   * events are stored in order, within SSE_REPLAY_MAX_EVENTS and
   * SSE_REPLAY_MAX_BYTES (the oldest are dropped past them).
   */
  open(sessionId: string, kind: StreamKind): StreamRecorder {
    const streamId = randomUUID();
    return this.recorder(streamId, this.store.open(streamId, sessionId, kind, LEASE_MS));
  }

  /** A resumed stream this connection now writes to (a session's listen stream). */
  adopt(streamId: string): StreamRecorder {
    return this.recorder(streamId, Promise.resolve());
  }

  private recorder(streamId: string, opened: Promise<unknown>): StreamRecorder {
    const sizes: { seq: number; bytes: number }[] = [];
    let bytes = 0;
    let chain: Promise<unknown> = opened.catch((error: Error) =>
      this.logger.warn(`stream ${streamId}: ${error.message}`),
    );
    this.attached.add(streamId);
    const then = (step: () => Promise<unknown>) => {
      chain = chain.then(step).catch((error: Error) => this.logger.warn(`stream ${streamId}: ${error.message}`));
    };
    return {
      streamId,
      record: (seq, data) => {
        const size = Buffer.byteLength(data, 'utf8');
        sizes.push({ seq, bytes: size });
        bytes += size;
        let drop = 0;
        while (
          sizes.length > this.env.SSE_REPLAY_MAX_EVENTS ||
          (sizes.length && bytes > this.env.SSE_REPLAY_MAX_BYTES)
        ) {
          const oldest = sizes.shift()!;
          bytes -= oldest.bytes;
          drop = oldest.seq;
        }
        // An event over the byte bound on its own is not stored: a resume from before it is refused.
        if (drop !== seq) then(() => this.store.append(streamId, seq, data));
        if (drop) then(() => this.store.dropThrough(streamId, drop));
      },
      // Ending also lets go of the stream, if this connection held it (one write): nothing more is sent on it.
      end: () => {
        const held = this.attached.delete(streamId);
        then(() => this.store.end(streamId, held));
      },
      detach: () => {
        if (this.attached.delete(streamId)) then(() => this.store.detach(streamId));
        return chain.then(() => undefined);
      },
    };
  }

  /** Take the stream a `Last-Event-ID` names for this session's new connection: 404 unknown, 409 held. */
  async resume(sessionId: string, lastEventId: string): Promise<Resumption & { seq?: number }> {
    const position = parseEventId(lastEventId);
    if (!position) return { ok: false, status: 404, reason: 'Last-Event-ID names no stream of this session' };
    const taken = await this.store.attach(position.streamId, sessionId, LEASE_MS);
    if (!taken.ok) {
      return taken.reason === 'busy'
        ? { ok: false, status: 409, reason: 'Conflict: the stream already has an active connection' }
        : { ok: false, status: 404, reason: 'Last-Event-ID names no stream of this session' };
    }
    this.attached.add(position.streamId);
    return { ok: true, streamId: position.streamId, kind: taken.kind, ended: taken.ended, seq: position.seq };
  }

  /**
   * Replay what the stream sent after `seq`, then (unless `follow` is false)
   * follow its writer until the stream ends or `stop` aborts. Resolves with the
   * last position sent, or 'gap' when events after `seq` are no longer stored.
   */
  async replay(
    streamId: string,
    seq: number,
    send: (seq: number, data: string) => void,
    stop: AbortSignal,
    follow: boolean,
  ): Promise<number | 'gap'> {
    let last = seq;
    while (!stop.aborted) {
      // Listen before reading, so an event stored in between is not missed.
      const notice = follow ? this.nextNotice(streamId, stop) : undefined;
      try {
        const found = await this.store.since(streamId, last);
        // Events after what was sent are gone: refuse at once, or stop here (the client's next resume is refused).
        if (found.gap) return last === seq ? 'gap' : last;
        for (const event of found.events) {
          send(event.seq, event.data);
          last = event.seq;
        }
        if (!notice || found.ended || !found.exists) return last;
        if (!found.events.length) await notice.heard;
      } finally {
        notice?.cancel();
      }
    }
    return last;
  }

  /** Resolves at the next notice for the stream (or when `stop` aborts). */
  private nextNotice(streamId: string, stop: AbortSignal): { heard: Promise<void>; cancel(): void } {
    let wake!: () => void;
    const heard = new Promise<void>((resolve) => (wake = resolve));
    const set = this.waiting.get(streamId) ?? new Set<() => void>();
    set.add(wake);
    this.waiting.set(streamId, set);
    stop.addEventListener('abort', wake, { once: true });
    return {
      heard,
      cancel: () => {
        stop.removeEventListener('abort', wake);
        set.delete(wake);
        if (set.size === 0 && this.waiting.get(streamId) === set) this.waiting.delete(streamId);
      },
    };
  }

  /** The connection holding a resumed stream left. */
  async detach(streamId: string): Promise<void> {
    if (!this.attached.delete(streamId)) return;
    await this.store.detach(streamId).catch((error: Error) => this.logger.warn(`stream ${streamId}: ${error.message}`));
  }

  private wake(streamId: string): void {
    for (const wake of this.waiting.get(streamId) ?? []) wake();
  }

  private wakeAll(): void {
    for (const id of this.waiting.keys()) this.wake(id);
  }

  private async renew(): Promise<void> {
    await this.store
      .renew([...this.attached], LEASE_MS)
      .catch((error: Error) => this.logger.warn(`stream leases: ${error.message}`));
  }

  private async purge(): Promise<void> {
    await this.store
      .purge(this.env.SSE_REPLAY_TTL_SECONDS)
      .catch((error: Error) => this.logger.warn(`stream purge: ${error.message}`));
  }
}
