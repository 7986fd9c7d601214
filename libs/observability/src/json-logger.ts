import type { LoggerService, LogLevel } from '@nestjs/common';

const LEVELS: Record<string, number> = { verbose: 0, debug: 1, log: 2, info: 2, warn: 3, error: 4, fatal: 5 };

/**
 * One JSON object per line on stdout: `{"time","level","service","context","msg",...}`.
 * Log aggregation parses it without rules; nothing here ever prints a secret
 * because callers log ids, not keys.
 */
export class JsonLogger implements LoggerService {
  private readonly threshold: number;

  constructor(
    private readonly service: string,
    level = 'info',
    private readonly fields: Record<string, unknown> = {},
  ) {
    this.threshold = LEVELS[level] ?? LEVELS.info;
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
  setLogLevels(_levels: LogLevel[]): void {}

  private write(level: string, message: unknown, rest: unknown[]): void {
    if ((LEVELS[level] ?? 0) < this.threshold) return;
    // Nest passes the context as the last string argument.
    const context = typeof rest.at(-1) === 'string' ? (rest.pop() as string) : undefined;
    const entry: Record<string, unknown> = {
      time: new Date().toISOString(),
      level,
      service: this.service,
      ...this.fields,
      context,
    };
    if (message instanceof Error) {
      entry.msg = message.message;
      entry.stack = message.stack;
    } else if (typeof message === 'object' && message !== null) {
      Object.assign(entry, message);
    } else {
      entry.msg = String(message);
    }
    if (rest.length && typeof rest[0] === 'string' && level === 'error') entry.stack = rest[0];
    process.stdout.write(`${JSON.stringify(entry)}\n`);
  }
}
