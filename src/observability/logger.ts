import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * The logger an agent uses when the caller passes none: silent, so a library never writes to a
 * user's stdout uninvited. Made once; pino's silent level makes every call a no-op.
 */
export const silentLogger: Logger = pino({ level: 'silent' });

export interface LogBindings {
  run_id: string;
  root_run_id: string;
  parent_run_id: string | null;
  tenant_id: string | null;
  trace_id?: string;
  span_id?: string;
  agent?: string;
}
