/**
 * Where the SDK writes its log lines: an object with a message (`msg`) and
 * fields, or a string. Pass your own (pino, Nest's Logger, …) to `createAgent`;
 * the default writes JSON lines to stderr, without `debug`.
 */
export interface AgentLogger {
  debug?(message: unknown): void;
  log(message: unknown): void;
  warn(message: unknown): void;
  error(message: unknown): void;
}

export function jsonLinesLogger(context: string): AgentLogger {
  const write = (level: string, message: unknown) => {
    const fields = typeof message === 'object' && message !== null ? message : { msg: String(message) };
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, context, ...fields })}\n`);
  };
  return {
    log: (message) => write('info', message),
    warn: (message) => write('warn', message),
    error: (message) => write('error', message),
  };
}
