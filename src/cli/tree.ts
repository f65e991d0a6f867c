import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { buildRunTree, runsOf, type TimedRunNode } from '../trace/run-tree.js';
import type { SpanRecord } from '../trace/span-records.js';
import { InputError, integerOption, UsageError, urlOption, usageErrorFrom } from './args.js';
import { MAX_WIDTH, MIN_WIDTH, terminalWidth } from './fit.js';
import { TREE_HELP } from './help.js';
import { jsonRunNode, treesJson } from './json-tree.js';
import { colorWanted, renderRunTree, summaryLine } from './render-tree.js';
import { terminalLines } from './terminal-text.js';
import { DEFAULT_MAX_DOCUMENT_MB, MAX_DOCUMENT_MB, readSpans } from './trace-file.js';

const OPTIONS = {
  json: { type: 'boolean' },
  jaeger: { type: 'string' },
  html: { type: 'string' },
  'jaeger-ui': { type: 'string' },
  width: { type: 'string' },
  'max-document-mb': { type: 'string' },
  session: { type: 'string' },
  tenant: { type: 'string' },
  redis: { type: 'string' },
  'key-prefix': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const JAEGER_EXAMPLE = 'http://localhost:16686';

async function jaegerSpans(url: string, rawTraceId: string, maxMb: number): Promise<SpanRecord[]> {
  const { fetchJaegerTrace, JaegerSourceError, normaliseTraceId } = await import('./jaeger-source.js');
  const traceId = normaliseTraceId(rawTraceId);
  if (traceId === null) throw new UsageError(`"${rawTraceId}" is not a trace id: give up to 32 hex digits, as the demo prints after "trace"`, 'tree');
  try {
    return await fetchJaegerTrace(url, traceId, { maxBytes: maxMb * 1024 * 1024 });
  } catch (error) {
    if (error instanceof JaegerSourceError) throw new InputError(error.message, 'tree');
    throw error;
  }
}

/** The one positional argument, or a sentence saying what is missing or extra. */
function sourceOf(positionals: string[], jaeger: string | undefined): string {
  if (positionals.length === 1) return positionals[0]!;
  if (positionals.length === 0) {
    throw new UsageError(
      jaeger === undefined
        ? 'no file given: name the OTLP/JSON file to draw (symfonic tree FILE), or "-" to read standard input'
        : `no trace id given: put the id of the trace to read after the URL (symfonic tree --jaeger ${jaeger} TRACE_ID); the demo prints it after "trace"`,
      'tree',
    );
  }
  const what = jaeger === undefined ? 'file' : 'trace id';
  throw new UsageError(`expected one ${what}, got ${positionals.length}: ${positionals.join(' ')}`, 'tree');
}

function pictures(roots: TimedRunNode[], width: number): string {
  const color = colorWanted();
  const out: string[] = [];
  roots.forEach((root, i) => {
    if (i > 0) out.push('');
    out.push(...renderRunTree(root, { color, width }), summaryLine(root, { color, width }));
  });
  return out.join('\n') + '\n';
}

/** `--session ID --tenant T (--redis URL [--jaeger URL] | --jaeger URL)`: every turn of a session (session-tree.ts). */
async function drawSession(v: { session?: string; tenant?: string; redis?: string; 'key-prefix'?: string; json?: boolean; html?: string }, positionals: string[], jaeger: string | undefined, jaegerUi: string | undefined, maxMb: number, width: number): Promise<number> {
  if (positionals.length > 0) throw new UsageError(`--session draws the session's turns: no FILE or trace id goes with it (got ${positionals.join(' ')})`, 'tree');
  if (v.tenant === undefined || v.tenant === '') throw new UsageError('--session needs --tenant T: a session id is one tenant\'s', 'tree');
  if (v.redis === undefined && jaeger === undefined) {
    throw new UsageError("--session reads the turns from the session store: give --redis URL (redis://127.0.0.1:6379), and --jaeger URL to draw each turn's tree; or --jaeger URL alone, to find the turns in the traces", 'tree');
  }
  if (v['key-prefix'] !== undefined && v.redis === undefined) throw new UsageError('--key-prefix names the session store\'s keys: give --redis URL with it', 'tree');
  if (v.redis !== undefined && !/^rediss?:\/\/[^/]/.test(v.redis)) throw new UsageError(`--redis must be a redis:// or rediss:// URL (got "${v.redis}")`, 'tree');
  const { sessionTree } = await import('./session-tree.js');
  const text = await sessionTree({
    sessionId: v.session!,
    tenantId: v.tenant,
    redis: v.redis,
    keyPrefix: v['key-prefix'],
    jaeger,
    spans: jaeger === undefined ? undefined : (traceId) => jaegerSpans(jaeger, traceId, maxMb),
    maxBytes: maxMb * 1024 * 1024,
    draw: (roots) => pictures(roots, width).replace(/\n$/, ''),
    format: v.json === true ? 'json' : v.html !== undefined ? 'html' : 'text',
    jaegerUi,
  });
  if (v.html === undefined) process.stdout.write(text);
  else writePage(v.html, text, `session ${v.session}`);
  return 0;
}

function writePage(file: string, page: string, what: string): void {
  try {
    writeFileSync(file, page);
  } catch (error) {
    throw new InputError(`cannot write ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such directory' : (error as Error).message}`, 'tree');
  }
  process.stdout.write(`wrote ${file}: ${what}\n`);
}

export async function treeCommand(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: true });
  } catch (error) {
    throw usageErrorFrom('tree', error);
  }
  const { values: v, positionals } = parsed;
  if (v.help) {
    process.stdout.write(TREE_HELP);
    return 0;
  }
  const jaeger = v.jaeger === undefined ? undefined : urlOption('tree', '--jaeger', v.jaeger, JAEGER_EXAMPLE).href.replace(/\/+$/, '');
  const jaegerUi = v['jaeger-ui'] === undefined ? jaeger : urlOption('tree', '--jaeger-ui', v['jaeger-ui'], JAEGER_EXAMPLE).href.replace(/\/+$/, '');
  const width = v.width === undefined ? terminalWidth() : integerOption('tree', '--width', v.width, MIN_WIDTH, MAX_WIDTH);
  const maxMb = v['max-document-mb'] === undefined ? DEFAULT_MAX_DOCUMENT_MB : integerOption('tree', '--max-document-mb', v['max-document-mb'], 1, MAX_DOCUMENT_MB);
  if (v.html !== undefined && v.html.trim() === '') throw new UsageError('--html needs a file name, e.g. --html tree.html', 'tree');
  if (v.html !== undefined && v.json === true) throw new UsageError('--html and --json: use one (--json prints to stdout, --html writes a file)', 'tree');
  if (v.session !== undefined) return drawSession(v, positionals, jaeger, jaegerUi, maxMb, width);
  const source = sourceOf(positionals, jaeger);
  const spans = jaeger === undefined ? await readSpans(source, maxMb) : await jaegerSpans(jaeger, source, maxMb);
  const roots = buildRunTree(spans);
  if (roots.length === 0) {
    const from = jaeger === undefined ? (source === '-' ? '<stdin>' : source) : `trace ${source} in Jaeger`;
    throw new InputError(`${from} holds no symfonic agent runs (no invoke_agent spans with symfonic.run_id)`, 'tree');
  }
  if (v.json) {
    process.stdout.write(terminalLines(treesJson(roots.map(jsonRunNode))) + '\n');
    return 0;
  }
  if (v.html !== undefined) {
    const { htmlPage } = await import('./html-tree.js');
    const page = htmlPage(roots, { jaegerUi, source: jaeger === undefined ? (source === '-' ? 'standard input' : source) : `${jaeger} (trace ${source})` });
    const runs = roots.reduce((k, r) => k + runsOf(r).length, 0);
    writePage(v.html, page, `${runs} run${runs === 1 ? '' : 's'} in ${roots.length} tree${roots.length === 1 ? '' : 's'}`);
    return 0;
  }
  process.stdout.write(pictures(roots, width));
  return 0;
}
