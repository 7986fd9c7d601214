import type { LoggerService } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { BusServer } from '@mcpgw/bus';
import type { ManagementServer } from '@mcpgw/observability';
import type { Server } from 'node:http';
import { Draining, type DrainParticipant } from './draining';

/** SHUTDOWN_GRACE_MS when an app's env has none (libs/config `ShutdownEnv` has the same). */
export const DEFAULT_SHUTDOWN_GRACE_MS = 20_000;
/** After the grace: how long NATS and the database get to close before the process exits 1 regardless. */
export const CLOSE_ALLOWANCE_MS = 5_000;
/** How often kept-alive connections whose last response went out are closed during the drain. */
const REAP_IDLE_EVERY_MS = 100;

export interface ShutdownTarget {
  app: NestFastifyApplication;
  management: ManagementServer;
  /** The app's bus request handlers, when it has some. */
  busServer?: BusServer;
  logger: LoggerService;
  graceMs: number;
  /** process.exit; replaced in tests. */
  exit?: (code: number) => void;
}

const CONTEXT = 'Shutdown';

/**
 * SIGTERM/SIGINT: drain (README.md beside this file), then exit 0, or 1 when
 * work had to be cut or something blocked. A second SIGTERM is ignored (the
 * deadline still holds); a second SIGINT exits at once.
 */
export function drainOnSignals(target: ShutdownTarget): void {
  const exit = target.exit ?? ((code: number) => process.exit(code));
  let running = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (running) {
      target.logger.warn({ msg: 'already draining', signal }, CONTEXT);
      if (signal === 'SIGINT') exit(1);
      return;
    }
    running = true;
    void shutdown(target, signal).then(exit);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/**
 * The whole sequence, one named step after the other; resolves with the exit
 * code. Past SHUTDOWN_GRACE_MS + CLOSE_ALLOWANCE_MS the process exits 1 from a
 * timer, naming the step it was in and what was still pending.
 */
export async function shutdown(target: ShutdownTarget, signal: NodeJS.Signals): Promise<number> {
  const { app, management, busServer, logger, graceMs } = target;
  const exit = target.exit ?? ((code: number) => process.exit(code));
  const began = Date.now();
  const draining = drainingOf(app);
  const participants = draining.participants;
  const http = app.getHttpServer() as Server;
  let step = 'stop-intake';
  let clean = true;

  const hardDeadline = setTimeout(() => {
    void pendingWork(participants, http).then((pending) => {
      logger.error(
        { msg: 'drain deadline passed: exiting', step, pending, after_ms: Date.now() - began, grace_ms: graceMs },
        CONTEXT,
      );
      exit(1);
    });
  }, graceMs + CLOSE_ALLOWANCE_MS);
  const enter = (next: string) => {
    step = next;
    logger.log({ msg: 'drain step', step, after_ms: Date.now() - began }, CONTEXT);
  };
  const each = async (hook: 'stopIntake' | 'endStreams' | 'handBack', who = participants) => {
    await Promise.all(
      who.map(async (participant) => {
        try {
          await participant[hook]?.();
        } catch (error) {
          logger.error(
            { msg: `${hook} failed`, participant: participant.name, error: (error as Error).message },
            CONTEXT,
          );
        }
      }),
    );
  };

  logger.log({ msg: 'stopping', signal, grace_ms: graceMs }, CONTEXT);

  // 1. Take no new work: not ready, the HTTP port answers 503 and accepts no connection, the
  //    bus hands new requests to the other replicas, and each participant stops its own intake.
  enter('stop-intake');
  draining.begin();
  management.markDraining();
  let httpOpen = true;
  const httpClosed = closeHttp(app).then(() => void (httpOpen = false));
  await busServer?.drainRequests();
  await each('stopIntake');

  // 2. End the streams that never end by themselves (GET SSE): their clients reconnect elsewhere.
  enter('end-streams');
  await each('endStreams');

  // 3. Let the work in flight finish within the grace period; then hand back what can be handed back.
  enter('finish-in-flight');
  const reaper = setInterval(() => http.closeIdleConnections(), REAP_IDLE_EVERY_MS);
  const unsettled = new Set(participants.filter((p) => p.settled));
  const settledAll = Promise.all([
    httpClosed,
    ...[...unsettled].map((p) =>
      p.settled!()
        .catch((error: Error) =>
          logger.error({ msg: 'settling failed', participant: p.name, error: error.message }, CONTEXT),
        )
        .then(() => unsettled.delete(p)),
    ),
  ]);
  let graceTimer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    settledAll.then(() => true),
    new Promise<boolean>((resolve) => (graceTimer = setTimeout(() => resolve(false), graceMs))),
  ]);
  clearTimeout(graceTimer);
  if (!inTime) {
    logger.warn(
      { msg: 'grace period over: handing back what is left', pending: await pendingWork(participants, http) },
      CONTEXT,
    );
    const left = [...unsettled];
    const cannot = left.filter((p) => !p.handBack);
    if (cannot.length || httpOpen) clean = false;
    await each('handBack', left);
    // Requests still running are cut: their clients get a closed connection.
    http.closeAllConnections();
  }
  clearInterval(reaper);

  // 4. Close: Nest's shutdown hooks drain NATS and close the database pools; then the management port.
  enter('close');
  try {
    await app.close();
  } catch (error) {
    clean = false;
    logger.error({ msg: 'unclean stop', error: (error as Error).message }, CONTEXT);
  }
  management.server.close();
  management.server.closeAllConnections();
  clearTimeout(hardDeadline);
  logger.log({ msg: clean ? 'drained' : 'stopped, with work cut', after_ms: Date.now() - began }, CONTEXT);
  return clean ? 0 : 1;
}

/** The app's `Draining` (from `DrainingModule`), or a fresh one for an app that does not take part. */
function drainingOf(app: NestFastifyApplication): Draining {
  try {
    return app.get(Draining, { strict: false });
  } catch {
    return new Draining();
  }
}

/** Stop the HTTP port taking work (Fastify answers 503 meanwhile); resolves once every connection is gone. */
async function closeHttp(app: NestFastifyApplication): Promise<void> {
  try {
    await app.getHttpAdapter().getInstance().close();
  } catch {
    // Not listening (an agent pod): nothing to wait for.
  }
}

async function pendingWork(participants: readonly DrainParticipant[], http: Server): Promise<string[]> {
  const connections = await new Promise<number>((resolve) => http.getConnections((error, n) => resolve(error ? 0 : n)));
  const pending = participants.flatMap((p) => (p.pending?.() ?? []).map((item) => `${p.name}: ${item}`));
  return connections ? [`http: ${connections} open connection(s)`, ...pending] : pending;
}
