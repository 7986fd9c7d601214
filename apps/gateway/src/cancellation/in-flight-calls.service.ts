import { randomUUID } from 'node:crypto';
import { Injectable, Optional } from '@nestjs/common';
import { Draining } from '@mcpgw/runtime';

/**
 * The calls this replica is running, by the key a client can cancel them with
 * (caller, session, JSON-RPC request id). A cancel that arrives at another
 * replica reaches this one through a fan-out bus event (`CallCancelled`,
 * call-cancelled.controller.ts). See README.md beside this file.
 */
@Injectable()
export class InFlightCalls {
  private readonly running = new Map<string, AbortController>();

  constructor(@Optional() draining?: Draining) {
    // Named when a drain outlives its grace period; the HTTP server waits for the calls themselves.
    draining?.register({
      name: 'calls',
      pending: () => (this.running.size ? [`${this.running.size} call(s) running`] : []),
    });
  }

  /**
   * JSON-RPC ids are unique only within a session, so a call without one gets a
   * key nobody else can name: it is cancelled only by closing its request.
   */
  static key(callerId: string, sessionId: string | undefined, requestId: string | number): string {
    return sessionId ? `${callerId}|${sessionId}|${JSON.stringify(requestId)}` : `${callerId}|${randomUUID()}`;
  }

  begin(key: string): { signal: AbortSignal; end(): void } {
    const controller = new AbortController();
    this.running.set(key, controller);
    return {
      signal: controller.signal,
      end: () => {
        if (this.running.get(key) === controller) this.running.delete(key);
      },
    };
  }

  /** True when the call runs here (and is now cancelled). */
  cancel(key: string): boolean {
    const controller = this.running.get(key);
    if (!controller) return false;
    controller.abort();
    this.running.delete(key);
    return true;
  }
}
