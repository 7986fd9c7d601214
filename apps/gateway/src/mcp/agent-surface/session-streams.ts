import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { McpSession } from '../../sessions/sessions.service';
import { ResumableStreams } from '../../streams/resumable-streams.service';
import { failure } from '../protocol/json-rpc';
import { sendRpc } from '../transport/responder';
import { SseStream } from '../transport/sse-stream';
import { AgentSurfaceCode } from './errors';
import { ListChangedStreams } from './list-changed.streams';

/**
 * Surface A's SSE streams of sessions as resumable streams
 * (`../../streams/README.md`): which new streams are recorded, and a GET with
 * `Last-Event-ID` resumed on this replica, whichever replica wrote the stream.
 */
@Injectable()
export class SessionStreams {
  constructor(
    private readonly streams: ResumableStreams,
    private readonly listChanged: ListChangedStreams,
  ) {}

  /**
   * A GET with `Last-Event-ID` (2025-11-25 resumability): replay what that
   * stream sent after it, from the store every replica reads, then go on: a
   * request's stream until its response, a listen stream as the session's
   * stream of notifications. 404 for a stream not of this session (or whose
   * events are gone), 409 while another connection holds it.
   */
  async resume(session: McpSession, lastEventId: string, reply: FastifyReply, release: () => void): Promise<void> {
    const refuse = (status: number, message: string) => {
      release();
      sendRpc(reply, undefined, status, failure(null, AgentSurfaceCode.InvalidRequest, message));
    };
    const taken = await this.streams.resume(session.id, lastEventId);
    if (!taken.ok) return refuse(taken.status, taken.reason);
    const stop = new AbortController();
    reply.raw.once('close', () => stop.abort());
    const listen = taken.kind === 'listen';
    const stream = new SseStream(reply, listen ? { recorder: this.streams.adopt(taken.streamId) } : taken.streamId);
    let opened = false;
    const send = (seq: number, data: string) => {
      if (!opened) stream.open({}, false);
      opened = true;
      stream.replay(seq, data);
    };
    if (!listen) reply.raw.once('close', () => void this.streams.detach(taken.streamId));
    const last = await this.streams.replay(
      taken.streamId,
      taken.seq!,
      send,
      stop.signal,
      !listen && !stop.signal.aborted,
    );
    if (last === 'gap') {
      await this.streams.detach(taken.streamId);
      return refuse(404, 'The events after Last-Event-ID are no longer stored: the stream cannot be resumed');
    }
    if (!opened) stream.open({}, false);
    if (listen) return this.listChanged.add(session.agentId, stream, session);
    stream.end();
  }

  /** The ids of a new stream's events: a recorded (resumable) stream for sessions that prime theirs (2025-11-25). */
  ids(
    session: McpSession | undefined,
    eventIds: boolean,
    priming: boolean,
    kind: 'request' | 'listen',
  ): ConstructorParameters<typeof SseStream>[1] {
    if (!eventIds) return undefined;
    if (session && priming) return { recorder: this.streams.open(session.id, kind) };
    return randomUUID();
  }
}
