import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { AgentCancel } from '@mcpgw/contracts';
import { BusClient, type BusSubscription } from '@mcpgw/bus';
import { AGENT_POD_ENV, type AgentPodEnv } from '../config/agent-pod.env';
import { RecentlySeen } from './recently-seen';

/** The reason an aborted skill gives when its caller cancelled it. */
export class SkillCancelledError extends Error {
  constructor(readonly messageId: string) {
    super(`call ${messageId} was cancelled`);
  }
}

/**
 * Cancel requests for this agent's messages. Every pod hears every cancel (a
 * fan-out subscription); the pod running the message aborts its skill. A cancel
 * that arrives before its message is remembered, so the message is dropped.
 */
@Injectable()
export class CancellationsService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(CancellationsService.name);
  private readonly running = new Map<string, AbortController>();
  private readonly cancelledEarly = new RecentlySeen(10_000);
  private subscription?: BusSubscription;

  constructor(
    private readonly bus: BusClient,
    @Inject(AGENT_POD_ENV) private readonly env: AgentPodEnv,
  ) {}

  onApplicationBootstrap(): void {
    this.subscription = this.bus.subscribe(AgentCancel.at(this.env.AGENT_ID), ({ payload }) =>
      this.cancel(payload.message_id, payload.reason),
    );
  }

  onApplicationShutdown(): void {
    this.subscription?.unsubscribe();
  }

  /** Abort every running skill (the pod is stopping): they end without a reply and are delivered again. */
  abortAll(reason: Error): void {
    for (const controller of this.running.values()) controller.abort(reason);
  }

  /** A signal that aborts when the message is cancelled (or the pod stops); `done` forgets it. */
  track(messageId: string): { signal: AbortSignal; cancelled: boolean; done(): void } {
    const controller = new AbortController();
    if (this.cancelledEarly.has(messageId)) controller.abort(new SkillCancelledError(messageId));
    this.running.set(messageId, controller);
    return {
      signal: controller.signal,
      get cancelled() {
        return controller.signal.reason instanceof SkillCancelledError;
      },
      done: () => void this.running.delete(messageId),
    };
  }

  private cancel(messageId: string, reason?: string): void {
    const controller = this.running.get(messageId);
    if (!controller) return this.cancelledEarly.add(messageId, true);
    this.logger.log({ msg: 'cancelling', message_id: messageId, reason });
    controller.abort(new SkillCancelledError(messageId));
  }
}
