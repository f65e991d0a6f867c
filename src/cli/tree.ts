import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { buildRunTree, publicRunNode } from '../trace/run-tree.js';
import { fromOtlpJson, type SpanRecord } from '../trace/span-records.js';
import { InputError, UsageError, urlOption, usageErrorFrom } from './args.js';
import { TREE_HELP } from './help.js';
import { colorWanted, renderRunTree, summaryLine } from './render-tree.js';

const OPTIONS = {
  json: { type: 'boolean' },
  jaeger: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function readText(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'it is a directory' : e.code === 'EACCES' ? 'permission denied' : e.message;
    throw new InputError(`cannot read ${file === '-' ? '<stdin>' : file}: ${why}`, 'tree');
  }
}

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

/**
 * The spans in a file: one JSON object (pretty-printed or not: an OTLP request, or a saved
 * Jaeger /api/v3 answer), or OTLP/JSON lines as the collector's file exporter writes them (one
 * request per line). Anything else is read line by line, so the error names the line.
 */
export function readSpans(file: string): SpanRecord[] {
  const name = file === '-' ? '<stdin>' : file;
  const text = readText(file);
  let whole: unknown;
  let wholeError: string | undefined;
  try {
    whole = JSON.parse(text);
  } catch (error) {
    wholeError = (error as Error).message;
  }
  if (wholeError === undefined && typeof whole === 'object' && whole !== null && !Array.isArray(whole)) return spansOf(whole, name);
  const spans: SpanRecord[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    const where = `${name}:${i + 1}`;
    let request: unknown;
    try {
      request = JSON.parse(line);
    } catch (error) {
      throw new InputError(
        `${where}: not valid JSON (${(error as Error).message}); expected one JSON object${wholeError ? ` (read whole: ${wholeError})` : ''} or one OTLP/JSON ExportTraceServiceRequest per line`,
        'tree',
      );
    }
    spans.push(...spansOf(request, where));
  }
  return spans;
}

async function jaegerSpans(url: string, rawTraceId: string): Promise<SpanRecord[]> {
  const { fetchJaegerTrace, JaegerSourceError, normaliseTraceId } = await import('./jaeger-source.js');
  const traceId = normaliseTraceId(rawTraceId);
  if (traceId === null) throw new UsageError(`"${rawTraceId}" is not a trace id: give up to 32 hex digits, as the demo prints after "trace"`, 'tree');
  try {
    return await fetchJaegerTrace(url, traceId);
  } catch (error) {
    if (error instanceof JaegerSourceError) throw new InputError(error.message, 'tree');
    throw error;
  }
}

export async function treeCommand(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: true });
  } catch (error) {
    throw usageErrorFrom('tree', error);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(TREE_HELP);
    return 0;
  }
  const what = values.jaeger === undefined ? 'FILE' : 'TRACE_ID';
  const usage = values.jaeger === undefined ? 'symfonic tree FILE' : 'symfonic tree --jaeger URL TRACE_ID';
  if (positionals.length !== 1) {
    throw new UsageError(positionals.length === 0 ? `missing ${what}: ${usage}` : `expected one ${what}, got ${positionals.length}: ${positionals.join(' ')}`, 'tree');
  }
  const source = positionals[0]!;
  const spans = values.jaeger === undefined ? readSpans(source) : await jaegerSpans(urlOption('tree', '--jaeger', values.jaeger).href, source);
  const roots = buildRunTree(spans);
  if (roots.length === 0) {
    const from = values.jaeger === undefined ? (source === '-' ? '<stdin>' : source) : `trace ${source} in Jaeger`;
    throw new InputError(`${from} holds no symfonic agent runs (no invoke_agent spans with symfonic.run_id)`, 'tree');
  }
  if (values.json) {
    const nodes = roots.map(publicRunNode);
    process.stdout.write(JSON.stringify(nodes.length === 1 ? nodes[0] : nodes, null, 2) + '\n');
    return 0;
  }
  const color = colorWanted();
  const out: string[] = [];
  roots.forEach((root, i) => {
    if (i > 0) out.push('');
    out.push(...renderRunTree(root, { color }), summaryLine(root, { color }));
  });
  process.stdout.write(out.join('\n') + '\n');
  return 0;
}
