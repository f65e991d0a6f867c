/**
 * The `symfonic` command line, run as users run it: every test spawns `node dist/cli/main.js`
 * (built by the global setup when src/ has moved on) and reads its exit code, stdout and stderr.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { colorWanted, renderRunTree } from '../../src/cli/render-tree.js';
import { SubAgentSpec, SymfonicAgent } from '../../src/index.js';
import { startTelemetry } from '../../src/telemetry/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { distStaleness } from '../support/dist.js';
import { allNodes, barColumns, find, htmlServer, JAEGER_UI_PAGE, otlpReceiver, ROOT, runCli, traceIdsIn, type CliResult, type JsonRunNode } from './helpers.js';

const DEMO_AGENTS = ['router', 'researcher', 'fact_checker', 'archivist', 'analyst', 'writer'];
const TRACE_LINE = /^trace ([0-9a-f]{32})$/m;
const ANSI = /\u001b\[/;

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'symfonic-cli-'));
  expect(distStaleness()).toBeNull();
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** One process per distinct argument list, shared by the tests that read it. */
const runs = new Map<string, Promise<CliResult>>();
const demo = (...args: string[]) => {
  const key = JSON.stringify(args);
  if (!runs.has(key)) runs.set(key, runCli(['demo', ...args]));
  return runs.get(key)!;
};

const lineOf = (stdout: string, agent: string) => stdout.split('\n').find((l) => new RegExp(`[─ ]${agent}\\s`).test(l) || l.startsWith(`${agent} `)) ?? '';

describe.concurrent('symfonic demo', () => {
  it('draws the whole bundled tree, with the depth refusal and the trace id, in plain text when stdout is not a TTY', async () => {
    const r = await demo('--width', '200');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const agent of DEMO_AGENTS) expect(r.stdout).toContain(agent);
    expect(r.stdout).toContain('refused_depth');
    expect(r.stdout).toMatch(/✗ archivist\s+–\s+refused_depth/);
    expect(r.stdout).toMatch(TRACE_LINE);
    expect(r.stdout).not.toMatch(ANSI);
    // Each run line carries its short run id and a time bar.
    for (const agent of ['router', 'researcher', 'fact_checker', 'analyst', 'writer']) {
      expect(lineOf(r.stdout, agent), agent).toMatch(/ [0-9a-f]{8} +[·█]{30} /);
    }
  });

  it('puts the parallel pair side by side on the time axis, and the writer after the analyst', async () => {
    const r = await demo('--width', '200');
    const root = barColumns(lineOf(r.stdout, 'router'));
    const researcher = barColumns(lineOf(r.stdout, 'researcher'));
    const analyst = barColumns(lineOf(r.stdout, 'analyst'));
    const writer = barColumns(lineOf(r.stdout, 'writer'));
    expect(root).toHaveLength(30);
    // Researcher and analyst come from one model turn, so their bars share columns.
    expect(researcher.some((c) => analyst.includes(c))).toBe(true);
    // The writer is asked only once both answered: it cannot start before the analyst ends
    // (one column of rounding either way).
    expect(writer[0]!).toBeGreaterThanOrEqual(analyst.at(-1)!);
  });

  it('--json prints the root RunNode alone, consistent with the tree it ran', async () => {
    const r = await demo('--json');
    expect(r.code).toBe(0);
    const root = JSON.parse(r.stdout) as JsonRunNode;
    expect(root.agent).toBe('router');
    expect(root.depth).toBe(0);
    expect(root.parentRunId).toBeNull();
    expect(root.status).toBe('ok');
    // researcher and analyst are asked in one turn; span start times have millisecond resolution,
    // so the pair's order is not asserted. The writer is asked a turn later.
    expect(root.children.map((c) => c.agent).slice(0, 2).sort()).toEqual(['analyst', 'researcher']);
    expect(root.children[2]?.agent).toBe('writer');
    const researcher = find(root, 'researcher')!;
    expect(researcher.children.map((c) => c.agent)).toEqual(['fact_checker']);
    const factChecker = find(root, 'fact_checker')!;
    expect(factChecker.children).toEqual([]);
    expect(Object.fromEntries(allNodes(root).map((n) => [n.agent, n.depth]))).toEqual({ router: 0, researcher: 1, fact_checker: 2, analyst: 1, writer: 1 });
    expect(allNodes(root)).toHaveLength(5);
    // Rollup: at every node, totalUsage is the sum of usage over its subtree, and nothing is zero.
    for (const n of allNodes(root)) {
      const sub = allNodes(n);
      expect(n.totalUsage, n.agent).toEqual({
        inputTokens: sub.reduce((s, x) => s + x.usage.inputTokens, 0),
        outputTokens: sub.reduce((s, x) => s + x.usage.outputTokens, 0),
      });
      expect(n.usage.inputTokens, n.agent).toBeGreaterThan(0);
      expect(n.tenantId).toBe('demo');
      expect(n.rootRunId).toBe(root.runId);
    }
    const outcomes = allNodes(root).flatMap((n) => n.delegations.map((d) => d.outcome));
    expect(outcomes).toContain('delegated');
    expect(outcomes).toContain('refused_depth');
    expect(factChecker.delegations).toEqual([{ child: 'archivist', outcome: 'refused_depth', childRunId: null }]);
    // Every delegated child run is the child the delegation names.
    for (const n of allNodes(root)) {
      for (const d of n.delegations.filter((x) => x.outcome === 'delegated')) {
        expect(n.children.find((c) => c.runId === d.childRunId)?.agent).toBe(d.child);
      }
    }
  });

  it('--max-depth 1 refuses the grandchild too', async () => {
    const [text, json] = await Promise.all([demo('--max-depth', '1', '--width', '200'), demo('--max-depth', '1', '--tenant', 'acme', '--json')]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/✗ fact_checker\s+–\s+refused_depth/);
    expect(text.stdout).not.toContain('archivist');
    const root = JSON.parse(json.stdout) as JsonRunNode;
    expect(find(root, 'fact_checker')).toBeUndefined();
    expect(find(root, 'researcher')!.delegations).toEqual([{ child: 'fact_checker', outcome: 'refused_depth', childRunId: null }]);
    expect(Math.max(...allNodes(root).map((n) => n.depth))).toBe(1);
  });

  it('--tenant scopes every run of the tree', async () => {
    const r = await demo('--max-depth', '1', '--tenant', 'acme', '--json');
    const root = JSON.parse(r.stdout) as JsonRunNode;
    expect(new Set(allNodes(root).map((n) => n.tenantId))).toEqual(new Set(['acme']));
  });

  it('--budget-usd 0.000001 refuses the root: the failed root is drawn, the error is on stderr, exit 1', async () => {
    const r = await demo('--budget-usd', '0.000001');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the root run "router" was refused: BudgetExceededError');
    expect(r.stderr).toContain('tenant "demo" is over budget');
    expect(lineOf(r.stdout, 'router')).toMatch(/error$/);
    expect(r.stdout).toMatch(TRACE_LINE);
    expect(r.stdout).not.toContain('answer');
  });

  it('--budget-usd 0.04 refuses the researcher (budget_exceeded) while the root still answers', async () => {
    const r = await demo('--budget-usd', '0.04', '--width', '200');
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(lineOf(r.stdout, 'router')).toMatch(/ ok$/);
    expect(lineOf(r.stdout, 'researcher')).toMatch(/ [0-9a-f]{8} .* budget_exceeded$/);
    expect(lineOf(r.stdout, 'analyst')).toMatch(/ delegated$/);
    expect(lineOf(r.stdout, 'writer')).toMatch(/ delegated$/);
    // The refused researcher never got to delegate.
    expect(r.stdout).not.toContain('fact_checker');
    expect(r.stdout).toContain('answer');
  });

  it('--otlp exports the same trace to the receiver and prints its Jaeger link', async () => {
    const receiver = await otlpReceiver();
    const ui = await htmlServer(JAEGER_UI_PAGE);
    try {
      const r = await runCli(['demo', '--otlp', receiver.url, '--jaeger-url', ui.url]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const traceId = TRACE_LINE.exec(r.stdout)![1]!;
      expect(r.stdout).toContain(`jaeger ${ui.url}/trace/${traceId}`);
      expect(receiver.requests.length).toBeGreaterThan(0);
      expect(receiver.requests.every((q) => q.path === '/v1/traces')).toBe(true);
      const bodies = receiver.requests.map((q) => q.body).join('\n');
      expect(receiver.requests.flatMap((q) => [...traceIdsIn(q.body)])).toContain(traceId);
      for (const agent of DEMO_AGENTS.filter((a) => a !== 'archivist')) expect(bodies).toContain(`invoke_agent ${agent}`);
      expect(bodies).toContain('refused_depth');
    } finally {
      await Promise.all([receiver.close(), ui.close()]);
    }
  });

  it('--otlp with --json keeps stdout to the JSON and puts the link (with --jaeger-url) on stderr', async () => {
    const receiver = await otlpReceiver();
    const ui = await htmlServer(JAEGER_UI_PAGE);
    try {
      const r = await runCli(['demo', '--json', '--otlp', `${receiver.url}/v1/traces`, '--jaeger-url', `${ui.url}/`]);
      expect(r.code).toBe(0);
      const root = JSON.parse(r.stdout) as JsonRunNode;
      const exported = receiver.requests.flatMap((q) => [...traceIdsIn(q.body)]);
      expect(exported).toHaveLength(1);
      expect(r.stderr.trim()).toBe(`jaeger ${ui.url}/trace/${exported[0]}`);
      expect(receiver.requests.map((q) => q.body).join('')).toContain(root.runId);
    } finally {
      await Promise.all([receiver.close(), ui.close()]);
    }
  });

  it('--otlp to a port nobody listens on still draws the tree, then reports the export failure and exits 1', async () => {
    const receiver = await otlpReceiver();
    await receiver.close();
    const r = await runCli(['demo', '--otlp', receiver.url]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(TRACE_LINE);
    expect(r.stdout).not.toContain('jaeger http');
    // One plain line: no JSON log record, no stack.
    expect(r.stderr).toMatch(new RegExp(`^symfonic demo: could not export spans to ${receiver.url}/v1/traces: [^\\n{]*ECONNREFUSED[^\\n{]* \\(spans were dropped\\)\\n$`));
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });
});

describe('symfonic demo --provider openai-compatible', () => {
  /** A Chat Completions server that plays each demo agent by the instructions it is sent. */
  async function fakeModelServer() {
    const seen: { auth: string | undefined; model: string; system: string; tools: string[] }[] = [];
    const call = (id: string, name: string, task: string) => ({ id, type: 'function', function: { name: 'run_agent', arguments: JSON.stringify({ name, task }) } });
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      req.on('end', () => {
        // openAICompatible asks GET /props before its first request with tools; this server has none.
        if (req.method === 'GET') {
          res.writeHead(404).end();
          return;
        }
        const body = JSON.parse(raw) as { model: string; messages: { role: string; content: string | null }[]; tools?: { function: { name: string } }[] };
        const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
        seen.push({ auth: req.headers.authorization, model: body.model, system, tools: (body.tools ?? []).map((t) => t.function.name) });
        const turn = body.messages.filter((m) => m.role === 'assistant').length;
        let message: object = { role: 'assistant', content: 'done' };
        if (system.startsWith('You coordinate') && turn === 0) {
          message = { role: 'assistant', content: null, tool_calls: [call('c1', 'researcher', 'figures'), call('c2', 'analyst', 'risks')] };
        } else if (system.startsWith('You coordinate') && turn === 1) {
          message = { role: 'assistant', content: null, tool_calls: [call('c3', 'writer', 'brief from notes')] };
        } else if (system.startsWith('You find facts') && turn === 0) {
          message = { role: 'assistant', content: null, tool_calls: [call('c4', 'fact_checker', 'check figures')] };
        } else if (system.startsWith('You verify') && turn === 0) {
          message = { role: 'assistant', content: null, tool_calls: [call('c5', 'archivist', 'sources')] };
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({ model: body.model, choices: [{ message, finish_reason: 'stop' }], usage: { prompt_tokens: 100, completion_tokens: 10 } }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { baseURL: `http://127.0.0.1:${port}/v1`, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  it('runs the same tree on a real HTTP model, each agent with its own instructions', async () => {
    const model = await fakeModelServer();
    try {
      const r = await runCli(['demo', '--provider', 'openai-compatible', '--base-url', model.baseURL, '--model', 'fake-model', '--api-key', 'k-123', '--json']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const root = JSON.parse(r.stdout) as JsonRunNode;
      expect(Object.fromEntries(allNodes(root).map((n) => [n.agent, n.depth]))).toEqual({ router: 0, researcher: 1, fact_checker: 2, analyst: 1, writer: 1 });
      expect(allNodes(root)).toHaveLength(5);
      expect(find(root, 'fact_checker')!.delegations.map((d) => d.outcome)).toEqual(['refused_depth']);
      // 9 model calls of 100 + 10 tokens each, all reported by the server.
      expect(model.seen).toHaveLength(9);
      expect(root.totalUsage).toEqual({ inputTokens: 900, outputTokens: 90 });
      expect(new Set(model.seen.map((s) => s.model))).toEqual(new Set(['fake-model']));
      expect(new Set(model.seen.map((s) => s.auth))).toEqual(new Set(['Bearer k-123']));
      // Five agents ran, each reading instructions of its own; the delegators were offered run_agent.
      expect(new Set(model.seen.map((s) => s.system)).size).toBe(5);
      for (const s of model.seen.filter((x) => /^You (coordinate|find facts|verify)/.test(x.system))) expect(s.tools).toContain('run_agent');
    } finally {
      await model.close();
    }
  });
});

describe.concurrent('usage', () => {
  it('--help lists the commands; demo --help and tree --help list their options; all exit 0', async () => {
    const [program, demo, tree, helpTree] = await Promise.all([
      runCli(['--help']),
      runCli(['demo', '--help']),
      runCli(['tree', '-h']),
      runCli(['help', 'tree']),
    ]);
    for (const r of [program, demo, tree, helpTree]) expect(r.code).toBe(0);
    expect(program.stdout).toMatch(/demo[\s\S]*tree FILE[\s\S]*--version/);
    for (const flag of ['--tenant', '--max-depth', '--budget-usd', '--json', '--otlp', '--jaeger-url', '--provider', '--base-url', '--model', '--api-key']) {
      expect(demo.stdout).toContain(flag);
    }
    expect(tree.stdout).toContain('--json');
    expect(helpTree.stdout).toBe(tree.stdout);
  });

  it('--version prints the package version', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = await runCli(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`symfonic ${pkg.version}`);
  });

  it('an unknown flag, command, bad value or missing command is exit 2 with a message on stderr and nothing on stdout', async () => {
    const cases: [string[], RegExp][] = [
      [['demo', '--bogus'], /unknown option --bogus for "symfonic demo"[\s\S]*symfonic demo --help/],
      [['tree', '--depth', 'x'], /unknown option --depth/],
      [['deploy'], /unknown command "deploy"/],
      [['--json'], /unknown option --json/],
      [[], /missing command/],
      [['demo', '--max-depth', 'two'], /--max-depth must be a whole number/],
      // A negative number is the option's value, refused with the range it takes.
      [['demo', '--max-depth', '-1'], /--max-depth must be a whole number from 0 to 32 \(got "-1"\)/],
      [['demo', '--max-depth=-1'], /--max-depth must be a whole number from 0 to 32 \(got "-1"\)/],
      [['demo', '--budget-usd', '-0.5'], /--budget-usd must be a number ≥ 0 \(got "-0.5"\)/],
      [['demo', '--width', '10'], /--width must be a whole number from 40 to 1000 \(got "10"\)/],
      [['demo', '--tenant', '-x'], /option --tenant needs a value/],
      [['demo', '--budget-usd=-1'], /--budget-usd must be a number ≥ 0/],
      [['demo', '--budget-usd', 'lots'], /--budget-usd must be a number ≥ 0/],
      [['help', 'deploy'], /no command "deploy"/],
      [['demo', '--tenant'], /option --tenant needs a value/],
      [['demo', '--otlp', 'localhost:4318'], /--otlp must be an http\(s\) URL/],
      [['demo', '--provider', 'openai-compatible'], /needs --base-url URL and --model NAME/],
      [['demo', '--provider', 'llama'], /unknown provider "llama"/],
      [['demo', '--model', 'gpt'], /--model only apply with --provider openai-compatible/],
      [['tree'], /no file given: name the OTLP\/JSON file to draw \(symfonic tree FILE\), or "-" to read standard input/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args)));
    results.forEach((r, i) => {
      const [args, message] = cases[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stdout, args.join(' ')).toBe('');
    });
  });

  it('colour only for a terminal without NO_COLOR', () => {
    expect(colorWanted({ isTTY: true }, {})).toBe(true);
    expect(colorWanted({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorWanted({ isTTY: false }, {})).toBe(false);
    expect(colorWanted({}, {})).toBe(false);
    const node = {
      agent: 'a', runId: 'r'.repeat(32), parentRunId: null, rootRunId: 'r'.repeat(32), depth: 0, tenantId: null, status: 'ok' as const,
      usage: { inputTokens: 1, outputTokens: 1 }, totalUsage: { inputTokens: 1, outputTokens: 1 }, delegations: [], children: [],
      traceId: 't'.repeat(32), startMs: 0, endMs: 10, costUsd: null, totalCostUsd: null,
    };
    expect(renderRunTree(node, { color: true }).join('\n')).toMatch(ANSI);
    expect(renderRunTree(node, { color: false }).join('\n')).not.toMatch(ANSI);
  });
});

describe('symfonic tree FILE', () => {
  let single: string;
  let double: string;
  let traceIds: string[];

  /** A planner that delegates to a searcher and to a name that is not on its roster, in one turn. */
  const team = () =>
    new SymfonicAgent({
      name: 'planner',
      modelProvider: scriptedModel(
        [
          {
            toolCalls: [
              { name: 'run_agent', arguments: { name: 'searcher', task: 'find the release date' } },
              { name: 'run_agent', arguments: { name: 'librarian', task: 'find the manual' } },
            ],
            usage: { inputTokens: 300, outputTokens: 40 },
          },
          { text: 'It shipped in May.', usage: { inputTokens: 420, outputTokens: 12 } },
        ],
        { modelName: 'plan-model' },
      ),
      subAgents: [
        new SubAgentSpec({
          name: 'searcher',
          description: 'Searches.',
          modelProvider: scriptedModel([{ text: 'May.', usage: { inputTokens: 150, outputTokens: 5 } }], { modelName: 'search-model' }),
        }),
      ],
    });

  beforeAll(async () => {
    const receiver = await otlpReceiver();
    const telemetry = startTelemetry({ otlpEndpoint: receiver.url, serviceName: 'cli-test' });
    try {
      const first = team();
      await first.run('When did it ship?', { scope: { tenantId: 'acme' } });
      await telemetry.flush();
      // One ExportTraceServiceRequest per line, as the collector's file exporter writes them.
      single = join(dir, 'one-run.jsonl');
      writeFileSync(single, receiver.requests.map((q) => JSON.stringify(JSON.parse(q.body)) + '\n').join(''));
      const second = team();
      await second.run('When did it ship?', { scope: { tenantId: 'acme' } });
    } finally {
      await telemetry.shutdown();
      await receiver.close();
    }
    double = join(dir, 'two-runs.jsonl');
    writeFileSync(double, receiver.requests.map((q) => JSON.stringify(JSON.parse(q.body)) + '\n').join(''));
    expect(receiver.requests.every((q) => q.headers['content-type']?.startsWith('application/json'))).toBe(true);
    traceIds = [...new Set(receiver.requests.flatMap((q) => [...traceIdsIn(q.body)]))];
    expect(traceIds).toHaveLength(2);
  });

  it('draws the run from a real startTelemetry export: agents, the unknown child, tokens and the trace id', async () => {
    const r = await runCli(['tree', '--width', '200', single]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(lineOf(r.stdout, 'planner')).toMatch(/ [0-9a-f]{8} +█{30} +772 +927 .* ok$/);
    expect(lineOf(r.stdout, 'searcher')).toMatch(/ 155 +155 .* delegated$/);
    expect(r.stdout).toMatch(/✗ librarian\s+–\s+unknown_child/);
    expect(TRACE_LINE.exec(r.stdout)?.[1]).toBe(traceIds[0]);
    expect(r.stdout).not.toMatch(ANSI);
  });

  it('--json prints the single root as an object, and several roots as an array', async () => {
    const [one, two] = await Promise.all([runCli(['tree', '--json', single]), runCli(['tree', double, '--json'])]);
    expect(one.code).toBe(0);
    const root = JSON.parse(one.stdout) as JsonRunNode;
    expect(root.agent).toBe('planner');
    expect(root.tenantId).toBe('acme');
    expect(root.children.map((c) => [c.agent, c.depth])).toEqual([['searcher', 1]]);
    expect(root.totalUsage).toEqual({ inputTokens: 870, outputTokens: 57 });
    // Both asked in one turn: compared as a set (span start times have millisecond resolution).
    expect(root.delegations.map((d) => [d.child, d.outcome]).sort()).toEqual([
      ['librarian', 'unknown_child'],
      ['searcher', 'delegated'],
    ]);
    const roots = JSON.parse(two.stdout) as JsonRunNode[];
    expect(Array.isArray(roots)).toBe(true);
    expect(roots.map((n) => n.agent)).toEqual(['planner', 'planner']);
    expect(new Set(roots.map((n) => n.runId)).size).toBe(2);
  });

  it('several roots get a picture each, with their own trace ids; "-" reads stdin', async () => {
    const r = await runCli(['tree', '-'], { input: readFileSync(double, 'utf8') });
    expect(r.code).toBe(0);
    const ids = [...r.stdout.matchAll(new RegExp(TRACE_LINE, 'gm'))].map((m) => m[1]);
    expect(new Set(ids)).toEqual(new Set(traceIds));
  });

  it('a missing file, an invalid JSON line, a non-object line and a file without runs are exit 2 naming the file', async () => {
    const missing = join(dir, 'nope.jsonl');
    const broken = join(dir, 'broken.jsonl');
    writeFileSync(broken, readFileSync(single, 'utf8').split('\n')[0] + '\n{"resourceSpans": [\n');
    const notObject = join(dir, 'array.jsonl');
    writeFileSync(notObject, '\n[1, 2]\n');
    const noRuns = join(dir, 'metrics.jsonl');
    writeFileSync(noRuns, '{"resourceMetrics":[]}\n');
    const [a, b, c, d, e] = await Promise.all([
      runCli(['tree', missing]),
      runCli(['tree', broken]),
      runCli(['tree', notObject]),
      runCli(['tree', noRuns]),
      runCli(['tree', dir]),
    ]);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain(`cannot read ${missing}: no such file`);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain(`${broken}:2: not valid JSON`);
    expect(c.code).toBe(2);
    expect(c.stderr).toContain(`${notObject}:2: expected a JSON object`);
    expect(d.code).toBe(2);
    expect(d.stderr).toContain(`${noRuns} holds no symfonic agent runs`);
    expect(e.code).toBe(2);
    expect(e.stderr).toContain(`cannot read ${dir}: it is a directory`);
    for (const r of [a, b, c, d, e]) expect(r.stdout).toBe('');
  });
});
