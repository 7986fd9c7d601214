import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { Caller } from '../../auth/caller';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';
import type { GatewayDb } from '../../database/schema';
import { TaskService, type TaskObserver } from '../../tasks/tasks.service';
import type { TaskRow } from '../../tasks/tasks.store';
import { SsrfGuard } from '../../webhooks/ssrf-guard';
import { A2A_PUSH_EVENT_TYPE, A2A_PUSH_V03_EVENT_TYPE } from '../../webhooks/event-types';
import { WebhookOutbox } from '../../webhooks/webhook-outbox.service';
import type { A2aFailure } from '../a2a-errors';
import { A2aTasks } from '../a2a-tasks.service';
import { taskToV03 } from '../compat-v03';
import { a2aTask, a2aTaskId } from '../task-shapes';
import { MAX_CONFIGS_PER_TASK, PushConfigsStore } from './push-configs.store';
import { isObject } from '../send-message';
import { parsePushConfig, wireConfig, type PushConfigInput } from './push-config-shapes';

export type PushAnswer = { ok: true; text: string } | { ok: false; failure: A2aFailure };

/**
 * A2A push notifications (README.md beside this folder's parent, "Push
 * notifications"): the caller's configs of its own tasks (another caller's
 * task is -32001, as for GetTask), each an endpoint of the webhook outbox;
 * and, as the tasks' observer, each change of a task that has configs written
 * to the outbox as a `StreamResponse`, in the transaction of the change. The
 * outbox's dispatcher delivers it: signed, retried, SSRF-checked.
 */
@Injectable()
export class A2aPush implements TaskObserver, OnModuleInit {
  private readonly guard: SsrfGuard;

  constructor(
    private readonly tasks: A2aTasks,
    private readonly taskService: TaskService,
    private readonly store: PushConfigsStore,
    private readonly outbox: WebhookOutbox,
    @Inject(GATEWAY_ENV) env: GatewayEnv,
  ) {
    this.guard = new SsrfGuard(env.WEBHOOK_ALLOWED_HOSTS);
  }

  onModuleInit(): void {
    this.taskService.observe(this);
  }

  /**
   * `CreateTaskPushNotificationConfig`: the config, made for the caller's task. `legacy`: asked
   * over A2A 0.3 (`tasks/pushNotificationConfig/set`), so its deliveries carry 0.3's body.
   */
  async create(
    caller: Caller,
    params: unknown,
    { taskIdOfPath, legacy = false }: CreateOptions = {},
  ): Promise<PushAnswer> {
    const taskId = taskIdOfPath ?? (isObject(params) ? params.taskId : undefined);
    const row = await this.tasks.rowOf(caller, taskId);
    if (!row) return notFound(taskId);
    const prepared = await this.prepare(params, a2aTaskId(row), undefined, legacy);
    return prepared.ok ? this.attach(row, prepared.config) : prepared;
  }

  /**
   * A config checked, its URL through the SSRF guard (as a webhook's), before anything is stored
   * (or, for SendMessage's `configuration.taskPushNotificationConfig`, posted). `taskId`: the
   * task's (a SendMessage's config names none: its id defaults to the task's, so a retried message
   * replaces its config rather than adding one).
   */
  async prepare(
    value: unknown,
    taskId: string,
    defaultId?: string,
    legacy = false,
  ): Promise<{ ok: true; config: PushConfigInput } | { ok: false; failure: A2aFailure }> {
    const parsed = parsePushConfig(value, taskId, defaultId);
    if (!parsed.ok) return invalid(parsed.detail);
    const admitted = await this.guard.admit(parsed.config.url);
    if (!admitted.ok) return invalid(`url: ${admitted.reason}`);
    return { ok: true, config: { ...parsed.config, url: admitted.url, legacy } };
  }

  /** A prepared config for a task; it starts with the task's state as it is (then each change). */
  async attach(row: TaskRow, config: PushConfigInput): Promise<PushAnswer> {
    const stored = await this.store.put(row, config, (tx, task, webhookId) =>
      this.record(tx, task, { webhookId, legacy: config.legacy === true }),
    );
    if (stored === 'gone') return notFound(a2aTaskId(row));
    if (stored === 'full') return invalid(`a task holds at most ${MAX_CONFIGS_PER_TASK} push notification configs`);
    return { ok: true, text: JSON.stringify(wireConfig(a2aTaskId(row), stored)) };
  }

  async get(caller: Caller, taskId: unknown, configId: unknown): Promise<PushAnswer> {
    const row = await this.tasks.rowOf(caller, taskId);
    if (!row) return notFound(taskId);
    const [stored] = typeof configId === 'string' ? await this.store.list(row.id, configId) : [];
    if (!stored) return configNotFound(taskId, configId);
    return { ok: true, text: JSON.stringify(wireConfig(a2aTaskId(row), stored)) };
  }

  /** All the task's configs (at most MAX_CONFIGS_PER_TASK: one page). */
  async list(caller: Caller, taskId: unknown): Promise<PushAnswer> {
    const row = await this.tasks.rowOf(caller, taskId);
    if (!row) return notFound(taskId);
    const configs = (await this.store.list(row.id)).map((stored) => wireConfig(a2aTaskId(row), stored));
    return { ok: true, text: JSON.stringify({ configs, nextPageToken: '' }) };
  }

  async remove(caller: Caller, taskId: unknown, configId: unknown): Promise<PushAnswer> {
    const row = await this.tasks.rowOf(caller, taskId);
    if (!row) return notFound(taskId);
    const removed = typeof configId === 'string' && (await this.store.remove(row.agent_id, row.id, configId));
    return removed ? { ok: true, text: '{}' } : configNotFound(taskId, configId);
  }

  /** TaskObserver: the task changed (it has configs): its new status to each of them. */
  changed(executor: GatewayDb, row: TaskRow): Promise<void> {
    return this.record(executor, row);
  }

  /**
   * The change as each A2A version's push body: 1.0's a `StreamResponse`, a
   * `statusUpdate` with the task's status as GetTask shows it (a failure's or a
   * question's status message included; the result is read with GetTask); 0.3's
   * the Task itself in 0.3's shape (as the SDK's 0.3 serializer sends it). Each
   * config hears its own version's; `first`: one config's first state, its
   * version's body only.
   */
  private async record(
    executor: GatewayDb,
    row: TaskRow,
    first?: { webhookId: string; legacy: boolean },
  ): Promise<void> {
    const task = a2aTask(row, this.tasks.contextOf(row));
    const v10 = {
      type: A2A_PUSH_EVENT_TYPE,
      payload: JSON.stringify({
        statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status, metadata: task.metadata },
      }),
    } as const;
    const v03 = { type: A2A_PUSH_V03_EVENT_TYPE, payload: JSON.stringify(taskToV03(task)) } as const;
    await this.outbox.recordPush(executor, {
      agentId: row.agent_id,
      callerId: row.principal,
      a2aTaskId: row.id,
      ...(first && { webhookId: first.webhookId }),
      bodies: first ? [first.legacy ? v03 : v10] : [v10, v03],
    });
  }
}

interface CreateOptions {
  /** The task named by the HTTP+JSON path (else the params' `taskId`). */
  taskIdOfPath?: string;
  legacy?: boolean;
}

function invalid(detail: string): { ok: false; failure: A2aFailure } {
  return { ok: false, failure: { kind: 'invalid_params', detail } };
}

function notFound(taskId: unknown): PushAnswer {
  return { ok: false, failure: { kind: 'task_not_found', taskId: String(taskId) } };
}

function configNotFound(taskId: unknown, configId: unknown): PushAnswer {
  return { ok: false, failure: { kind: 'push_config_not_found', taskId: String(taskId), configId: String(configId) } };
}
