/**
 * The lines of a byte stream, read as they arrive: only the line being read is held, never the
 * whole input, so a file of any size (200 MB of blank lines included) costs one line of memory.
 */

/** One line with text on it; blank lines are skipped but counted. */
export interface InputLine {
  text: string;
  /** 1-based, counting the blank lines skipped before it. */
  lineNo: number;
}

/** A line longer than the reader may hold. */
export class LineTooLongError extends Error {
  override name = 'LineTooLongError';
  constructor(
    readonly lineNo: number,
    readonly maxBytes: number,
  ) {
    super(`line ${lineNo} is longer than ${maxBytes} bytes`);
  }
}

const NEWLINE = 0x0a;
const isBlank = (b: number) => b === 0x20 || b === 0x09 || b === 0x0d;

/**
 * Non-blank lines of `chunks`, each at most `maxBytes` long. Runs of blank lines are skipped
 * byte by byte in a loop (one native call per line would take seconds on 200 million of them).
 * A newline byte never falls inside a UTF-8 sequence, so splitting bytes on it is safe.
 */
export async function* inputLines(chunks: AsyncIterable<Uint8Array>, maxBytes: number): AsyncGenerator<InputLine> {
  let parts: Uint8Array[] = [];
  let partBytes = 0;
  let lineNo = 1;
  // True while only blanks have been seen on the current line.
  let blankSoFar = true;
  for await (const chunk of chunks) {
    let i = 0;
    while (i < chunk.length) {
      if (blankSoFar) {
        while (i < chunk.length && (chunk[i] === NEWLINE || isBlank(chunk[i]!))) {
          if (chunk[i] === NEWLINE) lineNo++;
          i++;
        }
        if (i === chunk.length) break;
        blankSoFar = false;
      }
      const end = chunk.indexOf(NEWLINE, i);
      const stop = end === -1 ? chunk.length : end;
      partBytes += stop - i;
      if (partBytes > maxBytes) throw new LineTooLongError(lineNo, maxBytes);
      parts.push(chunk.subarray(i, stop));
      if (end === -1) break;
      yield { text: Buffer.concat(parts).toString('utf8').trim(), lineNo };
      parts = [];
      partBytes = 0;
      lineNo++;
      blankSoFar = true;
      i = end + 1;
    }
  }
  if (!blankSoFar) {
    const text = Buffer.concat(parts).toString('utf8').trim();
    if (text !== '') yield { text, lineNo };
  }
}
