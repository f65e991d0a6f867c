import { pino } from 'pino';

type LogFn = {
  (obj: object, msg?: string, ...args: unknown[]): void;
  (msg: string, ...args: unknown[]): void;
};

/**
 * The logger symfonic writes to: the part of pino's interface it uses. A type of our own rather
 * than pino's, so the published declarations compile in a project without pino's or Node's types;
 * a pino logger satisfies it as it is.
 */
export interface Logger {
  child(bindings: object): Logger;
  isLevelEnabled(level: string): boolean;
  error: LogFn;
  warn: LogFn;
  info: LogFn;
  debug: LogFn;
  trace: LogFn;
}

/**
 * The logger an agent uses when the caller passes none: silent, so a library never writes to a
 * user's stdout uninvited. Made once; pino's silent level makes every call a no-op.
 */
export const silentLogger: Logger = pino({ level: 'silent' });

/** Whether a value can serve as a Logger: checked once where a logger is accepted. */
export function isLogger(value: unknown): value is Logger {
  const l = value as Partial<Logger> | null;
  return typeof l === 'object' && l !== null && ['child', 'isLevelEnabled', 'error', 'warn', 'info', 'debug'].every((m) => typeof (l as Record<string, unknown>)[m] === 'function');
}

export interface LogBindings {
  run_id: string;
  root_run_id: string;
  parent_run_id: string | null;
  tenant_id: string | null;
  /** The scope's session (the conversation), null outside one. */
  session_id?: string | null;
  trace_id?: string;
  span_id?: string;
  agent?: string;
}
