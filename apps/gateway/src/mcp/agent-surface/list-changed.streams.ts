import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Draining } from '@mcpgw/runtime';
import { callerIdOf } from '../../auth/principal';
import { CacheInvalidationService } from '../../cache/cache-invalidation.service';
import { SessionsService, type McpSession } from '../../sessions/sessions.service';
import { TaskService } from '../../tasks/tasks.service';
import { ListenStreams } from '../subscriptions/listen-streams';
import type { SseStream } from '../transport/sse-stream';

const KEEP_ALIVE_MS = 25_000;
const TOOLS_LIST_CHANGED = 'notifications/tools/list_changed';
/** The revision whose sessions run tasks in the 2025-11-25 shape (and hear `notifications/tasks/status`). */
const TASKS_SHAPE_REVISION = '2025-11-25';

/**
 * The GET streams of surface A, by agent. When an agent's tools change (a pod
 * registers; heard on every replica through PostgreSQL NOTIFY), each open
 * stream of that agent gets `notifications/tools/list_changed`; when its
 * prompts or resources change (AgentNotices, from the gateway that stored the
 * registration), `notifications/prompts/list_changed` or
 * `notifications/resources/list_changed`. When the agent
 * updates a resource (AgentNotices on NATS, heard on every replica), the
 * streams of the sessions subscribed to it (PostgreSQL) get
 * `notifications/resources/updated`; when a task changes, the 2025-11-25
 * sessions of the key that made it get `notifications/tasks/status`. When the
 * replica drains, every stream is ended cleanly: the client reconnects (to
 * another replica, with Last-Event-ID) and the HTTP server can close.
 */
@Injectable()
export class ListChangedStreams implements OnApplicationShutdown {
  private readonly streams = new Map<string, Set<SseStream>>();
  /** The session each stream belongs to: it hears that session's resource updates and its key's tasks. */
  private readonly sessionOf = new WeakMap<SseStream, Pick<McpSession, 'id' | 'principal' | 'protocolVersion'>>();
  private readonly keepAlive = setInterval(() => this.each(undefined, (s) => s.keepAlive()), KEEP_ALIVE_MS).unref();

  constructor(
    invalidation: CacheInvalidationService,
    draining: Draining,
    listens: ListenStreams,
    private readonly sessions: SessionsService,
    private readonly tasks: TaskService,
  ) {
    listens.onResourceUpdate((agentId, uri) => void this.resourceUpdated(agentId, uri));
    listens.onTaskStatus((agentId, taskId) => void this.taskStatus(agentId, taskId));
    // Prompt and resource list changes come as AgentNotices; tool list changes from the registry's NOTIFY, below.
    listens.onListChanged((agentId, method) => {
      if (method !== TOOLS_LIST_CHANGED) this.each(agentId, (stream) => stream.send({ jsonrpc: '2.0', method }));
    });
    draining.register({
      name: 'sse-streams',
      endStreams: () => this.endAll(),
      pending: () => {
        const open = [...this.streams.values()].reduce((n, set) => n + set.size, 0);
        return open ? [`${open} GET stream(s) open`] : [];
      },
    });
    invalidation.on('agent', (agentId) =>
      this.each(agentId, (stream) => stream.send({ jsonrpc: '2.0', method: TOOLS_LIST_CHANGED })),
    );
  }

  open(agentId: string, stream: SseStream, priming: boolean, session: McpSession): void {
    stream.open({}, priming);
    this.add(agentId, stream, session);
  }

  /** A stream already open (a resumed one): it gets the agent's notifications (and its session's resource updates) from now on. */
  add(agentId: string, stream: SseStream, session?: McpSession): void {
    if (session) this.sessionOf.set(stream, session);
    const set = this.streams.get(agentId) ?? new Set<SseStream>();
    set.add(stream);
    this.streams.set(agentId, set);
  }

  /** An agent updated a resource: the streams of the sessions subscribed to it hear of it. */
  private async resourceUpdated(agentId: string, uri: string): Promise<void> {
    const open = new Map<string, SseStream[]>();
    this.each(agentId, (stream) => {
      const session = this.sessionOf.get(stream)?.id;
      if (session) open.set(session, [...(open.get(session) ?? []), stream]);
    });
    if (open.size === 0) return;
    const watching = await this.sessions.watching([...open.keys()], uri).catch(() => []);
    for (const session of watching) {
      for (const stream of open.get(session) ?? [])
        stream.send({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
    }
  }

  /**
   * A task changed: 2025-11-25 sessions of the key that made it hear
   * `notifications/tasks/status` on their GET streams (the row read once, here).
   */
  private async taskStatus(agentId: string, taskId: string): Promise<void> {
    const streams: SseStream[] = [];
    this.each(agentId, (stream) => {
      if (this.sessionOf.get(stream)?.protocolVersion === TASKS_SHAPE_REVISION) streams.push(stream);
    });
    if (streams.length === 0) return;
    const status = await this.tasks.legacyStatusFor(taskId, agentId).catch(() => undefined);
    if (!status) return;
    for (const stream of streams) {
      if (callerIdOf(this.sessionOf.get(stream)!.principal) !== status.principal) continue;
      stream.send({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: status.task });
    }
  }

  onApplicationShutdown(): void {
    this.endAll();
  }

  private endAll(): void {
    clearInterval(this.keepAlive);
    // The connections close, not the streams: a client resumes them on another replica.
    this.each(undefined, (stream) => stream.release());
  }

  /** Every open stream of the agent (or of all agents), dropping closed ones. */
  private each(agentId: string | undefined, act: (stream: SseStream) => void): void {
    for (const [id, set] of this.streams) {
      if (agentId && id !== agentId) continue;
      for (const stream of set) {
        if (stream.isClosed) set.delete(stream);
        else act(stream);
      }
      if (set.size === 0) this.streams.delete(id);
    }
  }
}
