import { Logger } from '@nestjs/common';
import { Server, type CustomTransportStrategy, type MessageHandler } from '@nestjs/microservices';
import { subject, type BusReply, type EventSpec } from '@mcpgw/contracts';
import { defaultIfEmpty, isObservable, lastValueFrom } from 'rxjs';
import { admit, refuseOnBus } from './bus-edge';
import { busMeter } from './bus-meter';
import { replyAllowed } from './auth/reply-inboxes';
import { failureFrame } from './bus-reply';
import { callIdsOf, markActiveFailed, traceReceive, type CallIds } from './bus-tracing';
import type { Msg, NatsConnection, Subscription } from 'nats';
import { decodeJson, encodeJson } from './json';

/** Handler extras: `{ fanout: true }` gives every replica its own copy of an event. */
export type BusHandlerExtras = {
  fanout?: boolean;
  /** The event's contract: its payload is checked before the handler runs; an invalid one is dropped. */
  event?: EventSpec<unknown>;
};

/**
 * What a request handler gets besides its payload (`@Ctx() ctx: BusContext`):
 * the subject it came on, and the call's request and trace ids (for its log
 * lines). Agent-scoped operations read the sending agent from the subject
 * (`agentOfSubject`): only that agent's credentials may publish there.
 */
export class BusContext {
  constructor(
    readonly subject: string,
    readonly ids: CallIds = {},
  ) {}
}

/** The extras of an `@EventPattern(spec.pattern, onEvent(spec))` handler: a fan-out copy per replica, checked. */
export function onEvent<T>(spec: EventSpec<T>): BusHandlerExtras {
  return { fanout: true, event: spec as EventSpec<unknown> };
}

/**
 * A Nest transport strategy for our bus contract. Handlers are ordinary
 * `@MessagePattern(BusPattern.X)` / `@EventPattern(Event.pattern, onEvent(Event))` methods; this
 * strategy adds the deployment prefix, puts request handlers in one queue group
 * per app (replicas share the work) and answers with `BusReply` frames, only
 * ever to the asker's own reply inbox: a message whose reply subject is
 * anything else is dropped before its handler runs (auth/reply-inboxes.ts).
 *
 * Why not Nest's built-in NATS transport: its subjects are fixed at decoration
 * time (no per-deployment prefix) and its wire frames are Nest-specific, while
 * agent pods in any language must be able to speak this contract.
 */
export class BusServer extends Server implements CustomTransportStrategy {
  private readonly subscriptions: Subscription[] = [];
  /** The queue-group subscriptions (requests, shared events): what a draining replica hands to the others. */
  private readonly queued: Subscription[] = [];
  private listening = false;
  protected override readonly logger = new Logger(BusServer.name);

  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly queue: string,
  ) {
    super();
  }

  listen(callback: () => void): void {
    for (const [pattern, handler] of this.messageHandlers) {
      const extras = (handler.extras ?? {}) as BusHandlerExtras;
      const queue = handler.isEventHandler && extras.fanout ? undefined : this.queue;
      busMeter.listening(pattern);
      const sub = this.nc.subscribe(subject(this.prefix, pattern), {
        queue,
        callback: (err, msg) => {
          if (err) return this.logger.error(`subscription ${pattern}: ${err.message}`);
          const kind = handler.isEventHandler ? 'message' : 'request';
          void traceReceive(kind, pattern, msg.headers, () => this.dispatch(pattern, handler, msg));
        },
      });
      this.subscriptions.push(sub);
      if (queue) this.queued.push(sub);
    }
    this.listening = true;
    callback();
  }

  /**
   * A readiness check of the app's bus handlers (`consumers`): subscribed, and none of
   * their subscriptions closed. States: `not subscribed`, `subscription closed`.
   */
  readiness(): { name: string; check(): Promise<string | void> } {
    return {
      name: 'consumers',
      check: async () => {
        if (!this.listening) return 'not subscribed';
        if (this.subscriptions.some((sub) => sub.isClosed())) return 'subscription closed';
      },
    };
  }

  close(): void {
    this.listening = false;
    for (const sub of this.subscriptions) sub.unsubscribe();
    this.subscriptions.length = 0;
  }

  /**
   * Shutdown: take no new requests (the other replicas of the queue group get
   * them) while the connection stays up for the answers of those in flight.
   * Fan-out events keep coming until `close`.
   */
  async drainRequests(): Promise<void> {
    await Promise.all(this.queued.splice(0).map((sub) => sub.drain().catch(() => undefined)));
  }

  on(): never {
    throw new Error('BusServer does not emit transport events');
  }

  unwrap<T>(): T {
    return this.nc as T;
  }

  private async dispatch(pattern: string, handler: MessageHandler, msg: Msg): Promise<void> {
    if (msg.reply && !replyAllowed(this.prefix, pattern, msg.subject, msg.reply)) {
      // Answered nowhere and not handled: the reply subject is not the asker's own inbox.
      return refuseOnBus(pattern, 'request with a foreign reply subject', "reply subject outside the asker's inbox");
    }
    const event = (handler.extras as BusHandlerExtras | undefined)?.event;
    if (event) {
      const parsed = admit(event, msg.data);
      if (parsed.ok) await this.runEvent(pattern, handler, parsed.value, callIdsOf(msg.headers));
      return;
    }
    const payload = decodeJson(msg.data);
    if (payload === undefined) {
      return this.respond(msg, { ok: false, error: { code: 'invalid_request', message: 'payload is not JSON' } });
    }
    try {
      // Nest hands back the handler's value, or an Observable when a filter or an interceptor ran.
      // The handler's context (`@Ctx() ctx: BusContext`): the subject, and the call's ids for its log lines.
      const returned: unknown = await handler(payload, new BusContext(msg.subject, callIdsOf(msg.headers)));
      const result = isObservable(returned) ? await lastValueFrom(returned.pipe(defaultIfEmpty(undefined))) : returned;
      this.respond(msg, { ok: true, data: result });
    } catch (error) {
      this.respond(
        msg,
        failureFrame(error, () => this.logger.error(`${pattern} failed: ${(error as Error).stack ?? error}`)),
      );
    }
  }

  /** An event has nobody to answer: a failure is logged. */
  private async runEvent<T>(pattern: string, handler: MessageHandler, payload: T, ids: CallIds): Promise<void> {
    try {
      const returned: unknown = await handler(payload, ids);
      if (isObservable(returned)) await lastValueFrom(returned.pipe(defaultIfEmpty(undefined)));
    } catch (error) {
      this.logger.error(`${pattern} failed: ${(error as Error).stack ?? error}`);
    }
  }

  private respond(msg: Msg, reply: BusReply<unknown>): void {
    if (!reply.ok) markActiveFailed(reply.error.code, reply.error.message);
    if (msg.reply) msg.respond(encodeJson(reply));
  }
}
