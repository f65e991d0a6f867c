// Text that fits a terminal: the picture's width is measured in visible columns, so ANSI styling
// does not count, and every character the CLI draws (box lines, bars, dots) is one column wide.

const ANSI = /\u001b\[[0-9;]*m/g;

export const DEFAULT_WIDTH = 80;
/** Narrower than this, not even agent, cost and outcome fit on a line. */
export const MIN_WIDTH = 40;
export const MAX_WIDTH = 1000;

export function visibleLength(s: string): number {
  return [...s.replace(ANSI, '')].length;
}

/**
 * The width to draw for when no --width is given: $COLUMNS (what a shell exports, and what a
 * user sets to ask for a width off a terminal), else the terminal's columns, else 80. A COLUMNS
 * that is not a positive whole number is ignored; one under MIN_WIDTH draws MIN_WIDTH wide.
 */
export function terminalWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout, env: NodeJS.ProcessEnv = process.env): number {
  const columns = env['COLUMNS']?.trim();
  if (columns !== undefined && /^\d+$/.test(columns) && Number(columns) > 0) return Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, Number(columns)));
  return stream.isTTY === true && typeof stream.columns === 'number' && stream.columns > 0 ? Math.max(MIN_WIDTH, stream.columns) : DEFAULT_WIDTH;
}

/**
 * Wraps text on word boundaries to `width` columns, keeping its line breaks. A word longer than
 * the width (a URL) gets a line of its own rather than being cut.
 */
export function wrapText(text: string, width: number): string[] {
  const out: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter((w) => w !== '')) {
      if (line === '') line = word;
      else if (visibleLength(line) + 1 + visibleLength(word) <= width) line += ' ' + word;
      else {
        out.push(line);
        line = word;
      }
    }
    out.push(line);
  }
  return out;
}

/**
 * Joins parts with `separator`, starting a new line (indented by `indent`) where the next part
 * would pass `width`: a summary breaks between its items, and inside one (between words) only
 * when the item alone is wider than a line.
 */
export function joinFitting(parts: readonly string[], separator: string, width: number, indent = ''): string[] {
  const lines: string[] = [];
  let line = '';
  for (const part of parts) {
    if (line === '') line = part;
    else if (visibleLength(line) + visibleLength(separator) + visibleLength(part) <= width) line += separator + part;
    else {
      lines.push(line);
      line = indent + part;
    }
    if (visibleLength(line) > width) {
      const wrapped = wrapText(line, width - indent.length);
      lines.push(...wrapped.slice(0, -1).map((l, i) => (i === 0 && lines.length === 0 ? l : indent + l)));
      line = indent + wrapped.at(-1)!;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}
