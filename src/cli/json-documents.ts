/**
 * JSON documents from lines: one per line (OTLP/JSON lines, as the collector's file exporter
 * writes them), or one spread over many lines (a pretty-printed request or Jaeger answer), or a
 * mix. A line that parses alone is a document; one that does not starts a document that ends on
 * the line where its brackets close. Only that document's lines are held, never the input.
 */
import type { InputLine } from './input-lines.js';

export interface JsonDocument {
  value: unknown;
  /** The line the document begins on. */
  lineNo: number;
}

/** Input that is not JSON: the line where parsing failed and the parser's reason. */
export class JsonLineError extends Error {
  override name = 'JsonLineError';
  constructor(
    readonly lineNo: number,
    readonly reason: string,
  ) {
    super(`line ${lineNo}: ${reason}`);
  }
}

/** A document spread over more characters than the reader may hold. */
export class DocumentTooLargeError extends Error {
  override name = 'DocumentTooLargeError';
  constructor(
    readonly lineNo: number,
    readonly maxChars: number,
  ) {
    super(`the JSON document that begins on line ${lineNo} is larger than ${maxChars} characters`);
  }
}

/** Bracket depth outside strings, fed line by line: where a multi-line document ends. */
class Nesting {
  depth = 0;
  private inString = false;
  private escaped = false;

  /** False when a bracket closed that was never opened. */
  feed(text: string): boolean {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c) this.escaped = true;
        else if (c === 0x22) this.inString = false;
      } else if (c === 0x22) this.inString = true;
      else if (c === 0x7b || c === 0x5b) this.depth++;
      else if (c === 0x7d || c === 0x5d) {
        if (--this.depth < 0) return false;
      }
    }
    return true;
  }
}

type Parsed = { ok: true; value: unknown } | { ok: false; message: string };

function parse(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

/** The file line a parser position falls on, in lines joined with "\n"; V8's own line count would skip blank lines. */
function failedLine(lines: readonly InputLine[], message: string): { lineNo: number; reason: string } {
  const reason = message.replace(/ \(line \d+ column \d+\)$/, '');
  const at = /at position (\d+)/.exec(message);
  if (!at) return { lineNo: lines[0]!.lineNo, reason };
  let offset = Number(at[1]);
  for (const line of lines) {
    if (offset <= line.text.length) return { lineNo: line.lineNo, reason };
    offset -= line.text.length + 1;
  }
  return { lineNo: lines.at(-1)!.lineNo, reason };
}

export async function* jsonDocuments(lines: AsyncIterable<InputLine>, maxChars: number): AsyncGenerator<JsonDocument> {
  let pending: { lines: InputLine[]; chars: number; nesting: Nesting } | undefined;
  for await (const line of lines) {
    if (pending === undefined) {
      const alone = parse(line.text);
      if (alone.ok) {
        yield { value: alone.value, lineNo: line.lineNo };
        continue;
      }
      const nesting = new Nesting();
      // A line whose brackets balance (or over-close) is complete, so it is simply not JSON.
      if (!nesting.feed(line.text) || nesting.depth === 0) throw new JsonLineError(line.lineNo, failedLine([line], alone.message).reason);
      pending = { lines: [line], chars: line.text.length, nesting };
      continue;
    }
    pending.lines.push(line);
    pending.chars += line.text.length + 1;
    if (pending.chars > maxChars) throw new DocumentTooLargeError(pending.lines[0]!.lineNo, maxChars);
    const balanced = pending.nesting.feed(line.text);
    if (balanced && pending.nesting.depth > 0) continue;
    const whole = parse(pending.lines.map((l) => l.text).join('\n'));
    if (!whole.ok) {
      const failed = failedLine(pending.lines, whole.message);
      throw new JsonLineError(failed.lineNo, failed.reason);
    }
    yield { value: whole.value, lineNo: pending.lines[0]!.lineNo };
    pending = undefined;
  }
  if (pending !== undefined) {
    const whole = parse(pending.lines.map((l) => l.text).join('\n'));
    const first = pending.lines[0]!.lineNo;
    const reason = whole.ok ? 'unexpected end' : failedLine(pending.lines, whole.message).reason;
    throw new JsonLineError(first, `${reason}; the document that begins on line ${first} never ends`);
  }
}
