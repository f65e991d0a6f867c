import { readFileSync } from 'node:fs';
import { buildRunTree, fromOtlpJson, publicRunNode, type SpanRecord } from '../observability/run-tree.js';
import { parseArgs } from 'node:util';
import { InputError, UsageError, usageErrorFrom } from './args.js';
import { TREE_HELP } from './help.js';
import { colorWanted, renderRunTree, summaryLine } from './render-tree.js';


const OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function readSpans(file: string): SpanRecord[] {
  const name = file === '-' ? '<stdin>' : file;
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'it is a directory' : e.code === 'EACCES' ? 'permission denied' : e.message;
    throw new InputError(`cannot read ${name}: ${why}`, 'tree');
  }
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
      throw new InputError(`${where}: not valid JSON (${(error as Error).message}); expected one OTLP/JSON ExportTraceServiceRequest per line`, 'tree');
    }
    if (typeof request !== 'object' || request === null || Array.isArray(request)) {
      throw new InputError(`${where}: expected a JSON object (an OTLP ExportTraceServiceRequest), got ${Array.isArray(request) ? 'an array' : String(request === null ? 'null' : typeof request)}`, 'tree');
    }
    try {
      spans.push(...fromOtlpJson(request));
    } catch (error) {
      throw new InputError(`${where}: not a readable OTLP trace request (${(error as Error).message})`, 'tree');
    }
  }
  return spans;
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
  if (positionals.length !== 1) {
    throw new UsageError(positionals.length === 0 ? 'missing FILE: symfonic tree FILE' : `expected one FILE, got ${positionals.length}: ${positionals.join(' ')}`, 'tree');
  }
  const file = positionals[0]!;
  const roots = buildRunTree(readSpans(file));
  if (roots.length === 0) {
    throw new InputError(`${file === '-' ? '<stdin>' : file} holds no symfonic agent runs (no invoke_agent spans with symfonic.run_id)`, 'tree');
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
