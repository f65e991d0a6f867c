/**
 * `symfonic tree FILE`: the spans of an OTLP/JSON file (or standard input), read as a stream of
 * lines, so the input's size bounds nothing but the spans it holds.
 */
import { createReadStream } from 'node:fs';
import { fromOtlpJson, type SpanRecord } from '../trace/span-records.js';
import { InputError } from './args.js';
import { DocumentTooLargeError, jsonDocuments, JsonLineError } from './json-documents.js';
import { inputLines, LineTooLongError } from './input-lines.js';

/** The largest line or pretty-printed document read by default (V8 strings stop at 512 MiB). */
export const DEFAULT_MAX_DOCUMENT_MB = 256;
export const MAX_DOCUMENT_MB = 500;

const EXPECTED = 'expected one JSON object (an OTLP request or a saved Jaeger answer, pretty-printed or not) or one OTLP/JSON ExportTraceServiceRequest per line';

function spansOf(document: unknown, where: string): SpanRecord[] {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    const got = Array.isArray(document) ? 'an array' : document === null ? 'null' : typeof document;
    throw new InputError(`${where}: expected a JSON object (an OTLP ExportTraceServiceRequest or a Jaeger /api/v3 answer), got ${got}`, 'tree');
  }
  try {
    return fromOtlpJson(document);
  } catch (error) {
    throw new InputError(`${where}: not a readable OTLP trace request (${(error as Error).message})`, 'tree');
  }
}

function unreadable(name: string, error: NodeJS.ErrnoException): InputError {
  const why = error.code === 'ENOENT' ? 'no such file' : error.code === 'EISDIR' ? 'it is a directory' : error.code === 'EACCES' ? 'permission denied' : error.message;
  return new InputError(`cannot read ${name}: ${why}`, 'tree');
}

/** Why reading stopped, as the message the user reads: the file, the line, and the fix. */
function inputError(name: string, error: unknown, maxMb: number): unknown {
  const raise = maxMb < MAX_DOCUMENT_MB ? `, or raise the bound with --max-document-mb (up to ${MAX_DOCUMENT_MB})` : '';
  if (error instanceof JsonLineError) return new InputError(`${name}:${error.lineNo}: not valid JSON (${error.reason}); ${EXPECTED}`, 'tree');
  if (error instanceof LineTooLongError) {
    return new InputError(`${name}:${error.lineNo}: a line longer than ${maxMb} MB: write one ExportTraceServiceRequest per line${raise}`, 'tree');
  }
  if (error instanceof DocumentTooLargeError) {
    return new InputError(`${name}:${error.lineNo}: a JSON document larger than ${maxMb} MB: write one ExportTraceServiceRequest per line${raise}`, 'tree');
  }
  const e = error as NodeJS.ErrnoException;
  if (typeof e?.code === 'string' && typeof e.syscall === 'string') return unreadable(name, e);
  return error;
}

/**
 * The spans in a file ("-" for standard input): one JSON object (pretty-printed or not: an OTLP
 * request, or a saved Jaeger /api/v3 answer), or OTLP/JSON lines as the collector's file exporter
 * writes them. Lines without spans (metrics, logs) add none; errors name the file and line.
 */
export async function readSpans(file: string, maxDocumentMb = DEFAULT_MAX_DOCUMENT_MB): Promise<SpanRecord[]> {
  const name = file === '-' ? '<stdin>' : file;
  const maxBytes = maxDocumentMb * 1024 * 1024;
  const stream = file === '-' ? process.stdin : createReadStream(file);
  const spans: SpanRecord[] = [];
  try {
    for await (const doc of jsonDocuments(inputLines(stream, maxBytes), maxBytes)) {
      for (const span of spansOf(doc.value, `${name}:${doc.lineNo}`)) spans.push(span);
    }
  } catch (error) {
    throw inputError(name, error, maxDocumentMb);
  } finally {
    if (file !== '-') (stream as ReturnType<typeof createReadStream>).destroy();
  }
  return spans;
}
