import { pino, type Logger } from 'pino';

/**
 * A real pino logger whose lines are kept, parsed, in `lines` (live: read it after the code under
 * test has logged). pino writes one whole line per write, so each write is one JSON document.
 */
export function collectingLogger<Line = Record<string, unknown>>(level: pino.LevelWithSilentOrString): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
  return { logger, lines };
}
