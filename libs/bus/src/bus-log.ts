/**
 * Where libs/bus writes its log lines. In the apps that is Nest's logger
 * (`BusModule` sets it); an agent built with the agent SDK passes its own.
 * Until one is set, lines go to stderr as JSON.
 */
export interface BusLog {
  log(message: unknown): void;
  warn(message: unknown): void;
  error(message: unknown): void;
}

const stderrLog: BusLog = {
  log: (message) => write('info', message),
  warn: (message) => write('warn', message),
  error: (message) => write('error', message),
};

function write(level: string, message: unknown): void {
  const fields = typeof message === 'object' && message !== null ? message : { msg: String(message) };
  process.stderr.write(`${JSON.stringify({ level, context: 'Bus', ...fields })}\n`);
}

let current: BusLog = stderrLog;

export function setBusLog(log: BusLog): void {
  current = log;
}

/** The bus's logger: whichever was set last. */
export const busLog: BusLog = {
  log: (message) => current.log(message),
  warn: (message) => current.warn(message),
  error: (message) => current.error(message),
};
