import { Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AgentNotices, GatewayNotices, type AgentNotice } from '@mcpgw/contracts';
import { BusClient, refuseOnBus, type BusSubscription } from '@mcpgw/bus';
import { Draining } from '@mcpgw/runtime';
import type { JsonRpcId } from '../protocol/json-rpc';
import type { SseStream } from '../transport/sse-stream';
import { CacheInvalidationService } from '../../cache/cache-invalidation.service';
import { TaskService } from '../../tasks/tasks.service';
import { NoticeRate } from './notice-rate';
import { SUBSCRIPTION_ID_META, type SubscriptionFilter } from './subscription-filter';

const KEEP_ALIVE_MS = 25_000;

/** The notification each notice becomes, and the filter field that asks for it. */
const LISTS = {
  tools_list_changed: ['toolsListChanged', 'notifications/tools/list_changed'],
  prompts_list_changed: ['promptsListChanged', 'notifications/prompts/list_changed'],
  resources_list_changed: ['resourcesListChanged', 'notifications/resources/list_changed'],
} as const;

interface Listener {
  id: JsonRpcId;
  filter: SubscriptionFilter;
  stream: SseStream;
}

/** Something that hears resource updates besides listen streams (2025-11-25 sessions). */
export type ResourceUpdateHook = (agentId: string, uri: string) => void;
export type TaskStatusHook = (agentId: string, taskId: string) => void;
/** Told the notification method of each list change heard (`notifications/prompts/list_changed`…). */
export type ListChangeHook = (agentId: string, method: string) => void;

/**
 * The `subscriptions/listen` streams (2026-07-28) open on this replica, by
 * agent. Every replica hears every agent's notices on NATS (`GatewayNotices`:
 * list changes announced by the gateway that stored a registration, task
 * states; `AgentNotices`: resource updates published by the agent, at most
 * `NoticeRate` of them per agent; and from PostgreSQL, on every replica, the
 * `tools:<agent>` notice of an operator's approval of a tool change, which
 * comes from the admin CLI too: ../../tool-pinning/) and writes each to the streams whose
 * filter asks for it, tagged with the stream's subscription id. When the
 * replica drains, every stream is closed gracefully: the listen request's
 * result, then the end of the stream.
 */
@Injectable()
export class ListenStreams implements OnModuleInit, OnApplicationShutdown {
  private readonly byAgent = new Map<string, Set<Listener>>();
  private readonly hooks: ResourceUpdateHook[] = [];
  private readonly taskHooks: TaskStatusHook[] = [];
  private readonly listHooks: ListChangeHook[] = [];
  private readonly subscriptions: BusSubscription[] = [];
  private readonly agentRate = new NoticeRate();
  private readonly keepAlive = setInterval(
    () => this.each(undefined, (l) => l.stream.keepAlive()),
    KEEP_ALIVE_MS,
  ).unref();

  constructor(
    private readonly bus: BusClient,
    private readonly tasks: TaskService,
    draining: Draining,
    invalidation: CacheInvalidationService,
  ) {
    // Each replica hears it and tells its own streams (no bus hop: the CLI that approves has no bus).
    invalidation.on('tools', (agentId) => agentId && this.deliver(agentId, { kind: 'tools_list_changed' }));
    draining.register({
      name: 'listen-streams',
      endStreams: () => this.closeAll(),
      pending: () => {
        const open = [...this.byAgent.values()].reduce((n, set) => n + set.size, 0);
        return open ? [`${open} subscriptions/listen stream(s) open`] : [];
      },
    });
  }

  onModuleInit(): void {
    this.subscriptions.push(
      this.bus.subscribe(GatewayNotices.at('*'), ({ payload, subject }) => this.deliver(agentOf(subject), payload)),
      this.bus.subscribe(AgentNotices.at('*'), ({ payload, subject }) => {
        const agentId = agentOf(subject);
        if (this.agentRate.admit(agentId)) return this.deliver(agentId, payload);
        refuseOnBus(AgentNotices.family, "notice over the agent's rate", `agent ${agentId}`);
      }),
    );
  }

  onApplicationShutdown(): void {
    for (const subscription of this.subscriptions.splice(0)) subscription.unsubscribe();
    this.closeAll();
  }

  /** Also tell `hook` of every resource update heard (the 2025-11-25 subscriptions). */
  onResourceUpdate(hook: ResourceUpdateHook): void {
    this.hooks.push(hook);
  }

  /** Also told of every task change heard (the sessions' GET streams send 2025-11-25 `notifications/tasks/status`). */
  onTaskStatus(hook: TaskStatusHook): void {
    this.taskHooks.push(hook);
  }

  /** Also told of every list change heard (the older sessions' GET streams send them too). */
  onListChanged(hook: ListChangeHook): void {
    this.listHooks.push(hook);
  }

  /** Open the stream: the acknowledgment first, with the honoured filter, then the notices as they come. */
  open(agentId: string, id: JsonRpcId, filter: SubscriptionFilter, stream: SseStream): void {
    stream.open({}, false);
    stream.send({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { [SUBSCRIPTION_ID_META]: id }, notifications: filter },
    });
    const set = this.byAgent.get(agentId) ?? new Set<Listener>();
    set.add({ id, filter, stream });
    this.byAgent.set(agentId, set);
  }

  private deliver(agentId: string, notice: AgentNotice): void {
    if (notice.kind === 'task_status') {
      for (const hook of this.taskHooks) hook(agentId, notice.task_id!);
      void this.taskStatus(agentId, notice.task_id!);
      return;
    }
    if (notice.kind === 'resource_updated') {
      const uri = notice.uri!; // required for this kind (checkAgentNotice)
      for (const hook of this.hooks) hook(agentId, uri);
      this.each(agentId, (listener) => {
        if (listener.filter.resourceSubscriptions?.includes(uri))
          this.notify(listener, 'notifications/resources/updated', { uri });
      });
      return;
    }
    const [field, method] = LISTS[notice.kind];
    for (const hook of this.listHooks) hook(agentId, method);
    this.each(agentId, (listener) => {
      if (listener.filter[field]) this.notify(listener, method, {});
    });
  }

  /** A task's state changed: its DetailedTask, read from its row, to the streams that watch it (its caller's). */
  private async taskStatus(agentId: string, taskId: string): Promise<void> {
    const watching: Listener[] = [];
    this.each(agentId, (listener) => {
      if (listener.filter.taskIds?.includes(taskId)) watching.push(listener);
    });
    if (!watching.length) return;
    const state = await this.tasks.detailedFor(taskId, agentId).catch(() => undefined);
    if (state) for (const listener of watching) this.notify(listener, 'notifications/tasks', state);
  }

  private notify(listener: Listener, method: string, params: Record<string, unknown>): void {
    listener.stream.send({
      jsonrpc: '2.0',
      method,
      params: { ...params, _meta: { [SUBSCRIPTION_ID_META]: listener.id } },
    });
  }

  /** A graceful end: the listen request's (empty) result, then the end of its stream. */
  private closeAll(): void {
    clearInterval(this.keepAlive);
    this.each(undefined, (listener) => {
      listener.stream.send({
        jsonrpc: '2.0',
        id: listener.id,
        result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID_META]: listener.id } },
      });
      listener.stream.end();
    });
  }

  /** Every open stream of the agent (or of all agents), dropping closed ones. */
  private each(agentId: string | undefined, act: (listener: Listener) => void): void {
    for (const [id, set] of this.byAgent) {
      if (agentId !== undefined && id !== agentId) continue;
      for (const listener of set) {
        if (listener.stream.isClosed) set.delete(listener);
        else act(listener);
      }
      if (set.size === 0) this.byAgent.delete(id);
    }
  }
}

/** The agent a notices subject names (`….agents.<agent>.notices`, either family). */
function agentOf(subject: string): string {
  const tokens = subject.split('.');
  return tokens[tokens.length - 2];
}
