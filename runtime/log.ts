// Structured JSON logs, one object per line on stderr.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

function describeError(value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message } : value;
}

export function createLogger(
  base: Record<string, unknown> = {},
  minimum: LogLevel = (process.env.SIMLOCK_LOG_LEVEL as LogLevel | undefined) ?? 'info',
  write: (line: string) => void = (line) => process.stderr.write(line + '\n'),
): Logger {
  const threshold = LEVELS[minimum] ?? LEVELS.info;
  const log = (level: LogLevel, message: string, fields: Record<string, unknown> = {}) => {
    if (LEVELS[level] < threshold) return;
    const entries = Object.entries(fields).map(([key, value]) => [key, describeError(value)]);
    write(
      JSON.stringify({
        time: new Date().toISOString(),
        level,
        msg: message,
        ...base,
        ...Object.fromEntries(entries),
      }),
    );
  };
  return {
    debug: (message, fields) => log('debug', message, fields),
    info: (message, fields) => log('info', message, fields),
    warn: (message, fields) => log('warn', message, fields),
    error: (message, fields) => log('error', message, fields),
    child: (fields) => createLogger({ ...base, ...fields }, minimum, write),
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = createLogger({}, 'error', () => undefined);
