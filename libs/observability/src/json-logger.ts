import type { LoggerService, LogLevel } from '@nestjs/common';
import { pino, type DestinationStream, type Logger } from 'pino';
import { logContextFields } from './logging/log-context';
import { REDACT_PATHS, REDACTED, redactLogLine } from './logging/redaction';

/** Nest's levels as pino's: `log` is `info`; `verbose` sits between `trace` and `debug`. */
type Level = 'verbose' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';
const LEVEL_OF: Record<string, Level> = {
  verbose: 'verbose',
  debug: 'debug',
  log: 'info',
  info: 'info',
  warn: 'warn',
  error: 'error',
  fatal: 'fatal',
};

/**
 * One JSON object per line on stdout, written by pino:
 * `{"level","time","service","instance","context","msg",...}` plus `request_id`
 * inside a request and `trace_id`/`span_id` inside a span (README.md). Secrets
 * are redacted twice: by field name (`REDACT_PATHS`), and by shape in the
 * finished line (`redactLogLine`: API keys, access tokens, RuntimeGrants).
 */
export class JsonLogger implements LoggerService {
  private readonly pino: Logger<'verbose'>;

  constructor(
    service: string,
    level = 'info',
    fields: Record<string, unknown> = {},
    /** Where lines go; default stdout (synchronous on a pipe or file, so nothing is lost at exit). */
    destination: DestinationStream = process.stdout,
  ) {
    this.pino = pino<'verbose'>(
      {
        level: LEVEL_OF[level] ?? 'info',
        customLevels: { verbose: 15 },
        base: { service, ...fields },
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
        mixin: logContextFields,
        redact: { paths: REDACT_PATHS, censor: REDACTED },
        hooks: { streamWrite: redactLogLine },
      },
      destination,
    );
  }

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }
  /** Whether lines at `level` are written: lets a caller skip building a line nobody reads. */
  isLevelEnabled(level: Level): boolean {
    return this.pino.isLevelEnabled(level);
  }

  /** LOG_LEVEL decides; Nest's own setting is ignored. */
  setLogLevels(_levels: LogLevel[]): void {}

  private write(level: Level, message: unknown, rest: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    // Nest passes the context as the last string argument.
    const context = typeof rest.at(-1) === 'string' ? (rest.pop() as string) : undefined;
    const entry: Record<string, unknown> = { context };
    if (message instanceof Error) {
      entry.msg = message.message;
      entry.stack = message.stack;
    } else if (typeof message === 'object' && message !== null) {
      Object.assign(entry, message);
    } else {
      entry.msg = String(message);
    }
    if (rest.length && typeof rest[0] === 'string' && level === 'error') entry.stack = rest[0];
    this.pino[level](entry);
  }
}
