import { Global, Injectable, Module } from '@nestjs/common';

/**
 * One part of an app that holds work when the service is told to stop, and
 * what it does at each step of the drain (README.md beside this file). Every
 * hook is optional; a hook that throws is logged and the drain goes on.
 */
export interface DrainParticipant {
  /** Named in the shutdown logs. */
  readonly name: string;
  /** Step 1: take no new work (stop pulling, answer what waits elsewhere). */
  stopIntake?(): void | Promise<void>;
  /** Step 2: end the streams that would otherwise never end (clients reconnect elsewhere). */
  endStreams?(): void | Promise<void>;
  /** Step 3: resolves once the work in flight is done. Raced against SHUTDOWN_GRACE_MS. */
  settled?(): Promise<void>;
  /**
   * Step 3, past the grace: give the unfinished work back to someone else
   * (e.g. nak inbox messages), so stopping loses nothing. A participant that
   * cannot hand back and has not settled makes the drain unclean (exit 1).
   */
  handBack?(): Promise<void>;
  /** What is still in flight, for the logs (empty: nothing). */
  pending?(): string[];
}

/**
 * Whether this process drains, and who takes part. Inject it to know
 * (`active`), or `register` a participant in a constructor or `onModuleInit`.
 * The shutdown sequence (`shutdown.ts`) drives it; apps never begin it.
 */
@Injectable()
export class Draining {
  private started = false;
  private readonly members: DrainParticipant[] = [];

  /** True from the first SIGTERM/SIGINT on. */
  get active(): boolean {
    return this.started;
  }

  register(participant: DrainParticipant): void {
    this.members.push(participant);
  }

  get participants(): readonly DrainParticipant[] {
    return this.members;
  }

  /** Called once by the shutdown sequence. */
  begin(): void {
    this.started = true;
  }
}

/** Provides `Draining` to the whole app: import it once, in the app's root module. */
@Global()
@Module({ providers: [Draining], exports: [Draining] })
export class DrainingModule {}
