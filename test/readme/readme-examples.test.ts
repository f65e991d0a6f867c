/**
 * Every ```ts block of README.md runs as written and prints what its comments say. Each block is
 * run as a module, its imports of 'symfonic', 'symfonic/testing' and 'symfonic/telemetry' pointed
 * at src/; every block is also type-checked as a user's file would be. A block that cannot run
 * here is listed in TYPE_CHECKED_ONLY with the reason, and a ts block the README gains without a
 * test here fails the coverage check.
 *
 * The only substitutions, each stated where it is made: the Quick start's OpenAI base URL becomes
 * a loopback server speaking the Chat Completions wire format, and the Jaeger section's OTLP
 * endpoint becomes a loopback OTLP/HTTP receiver.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { scriptedApi } from '../model/http-server.js';
import { README, ROOT, block, promised, rendered, runModule, scratchDir, substitute, tsBlocks, typeCheck } from './readme-blocks.js';

/** Blocks `npm test` cannot run, and why; they are type-checked all the same. */
const TYPE_CHECKED_ONLY: Record<string, string> = {
  'Budgets across a fleet (Redis)':
    'needs a Redis server; test/stack-e2e/readme/readme-redis.test.ts runs it under npm run test:stack (SYMFONIC_STACK_REDIS)',
  'Serving a fleet': 'needs a Redis server; test/stack-e2e/readme/readme-fleet.test.ts runs it under npm run test:stack (SYMFONIC_STACK_REDIS)',
  'Serving a fleet #2': 'needs Redis and PostgreSQL; test/stack-e2e/readme/readme-fleet.test.ts runs it under npm run test:stack (SYMFONIC_STACK_REDIS, SYMFONIC_STACK_POSTGRES)',
  'Durable trees': 'needs PostgreSQL; test/stack-e2e/readme/readme-durable.test.ts runs it under npm run test:stack (SYMFONIC_STACK_POSTGRES)',
};

/** The blocks this file runs; the coverage check compares this list with the README. */
const RUN = [
  'Quick start',
  'Quick start #2',
  'Sub-agents',
  'Per-role models',
  'Models from the AI SDK',
  'Structured output',
  'Conversations',
  'Questions for the user',
  'Human in the loop',
  'Human in the loop #2',
  'MCP tools',
  'Remote children (A2A)',
  'Live runs',
  'Live runs #2',
  'Tracing delegation trees in Jaeger',
  'Budgets per tenant',
  'Asserting lineage in your tests',
] as const;

const scratch = scratchDir('readme');
afterAll(() => scratch.remove());
const run = (source: string) => runModule(scratch.dir, source);

/** The comments beside the console.log calls say exactly what those calls print. */
function expectCommentsToMatch(source: string, lines: unknown[][]): void {
  expect(promised(source)).toEqual(lines.map(rendered));
}

describe('README ts blocks', () => {
  it('are each run by this file or listed with the reason they are only type-checked', () => {
    const inReadme = tsBlocks(README).map((b) => b.key);
    expect(new Set(inReadme).size).toBe(inReadme.length);
    expect([...inReadme].sort()).toEqual([...RUN, ...Object.keys(TYPE_CHECKED_ONLY)].sort());
  });

  // One program for the README's blocks and two faulty ones (each block is a module of its own).
  const FAULTY = [
    { key: 'undefined variable', source: "import { Agent } from 'symfonic';\nnew Agent({ name: 'a', modelProvider: model });\n" },
    { key: 'old name', source: "import { Agent } from 'symfonic';\nimport { scriptedModel } from 'symfonic/testing';\nnew Agent({ name: 'a', model: scriptedModel(['x']) });\n" },
  ];
  let checked: Record<string, string[]> | undefined;
  const typeChecked = () => (checked ??= typeCheck([...tsBlocks(README), ...FAULTY]));

  it('type-check as a user project importing symfonic would compile them', { timeout: 180_000 }, () => {
    const diagnostics = typeChecked();
    const failing = Object.fromEntries(Object.entries(diagnostics).filter(([key, d]) => d.length > 0 && !FAULTY.some((f) => f.key === key)));
    expect(failing).toEqual({});
  });

  it('the type check can fail: an undefined variable and an old option name are reported', { timeout: 180_000 }, () => {
    const diagnostics = typeChecked();
    expect(diagnostics['undefined variable']!.join('\n')).toMatch(/Cannot find name 'model'/);
    expect(diagnostics['old name']!.join('\n')).toMatch(/'model' does not exist/);
  });
});

describe('README: Quick start', () => {
  const serve = scriptedApi({ unscripted: { error: { message: 'the README test scripted no more replies' } }, basePath: '/v1' });
  afterEach(() => vi.unstubAllEnvs());

  it('runs against a Chat Completions server: the tool call, its result, the answer, lineage, usage and cost', async () => {
    const usage = (prompt: number, completion: number) => ({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });
    const { baseURL, seen } = await serve([
      {
        body: {
          id: 'chatcmpl-1', object: 'chat.completion', model: 'gpt-4o-mini-2024-07-18', usage: usage(80, 12),
          choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] } }],
        },
      },
      {
        body: {
          id: 'chatcmpl-2', object: 'chat.completion', model: 'gpt-4o-mini-2024-07-18', usage: usage(110, 9),
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'No coat needed: 21 °C.' } }],
        },
      },
    ]);
    vi.stubEnv('OPENAI_API_KEY', 'sk-readme-test');
    // Substitution: the one URL, so the real HTTP client talks to the loopback server above.
    const source = substitute(block('Quick start'), "'https://api.openai.com/v1'", JSON.stringify(baseURL));
    const lines = await run(source);

    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /v1/chat/completions', 'POST /v1/chat/completions']);
    expect(seen[0]!.headers.authorization).toBe('Bearer sk-readme-test');
    expect(seen[0]!.body).toMatchObject({ model: 'gpt-4o-mini', tools: [{ type: 'function', function: { name: 'weather' } }] });
    const messages = seen[1]!.body.messages as { role: string; content: string }[];
    expect(messages.at(-1)).toMatchObject({ role: 'tool', content: JSON.stringify({ city: 'Oslo', tempC: 21 }) });
    expect(messages.find((m) => m.role === 'system')?.content).toContain('Answer briefly.');

    expect(lines).toHaveLength(1);
    const [answer, runId, totalUsage, cost] = lines[0]!;
    expect(answer).toBe('No coat needed: 21 °C.');
    expect(runId).toMatch(/^[A-Za-z0-9_.:-]+$/);
    expect(totalUsage).toMatchObject({ inputTokens: 190, outputTokens: 21, source: 'reported' });
    // Priced from the maintained price data: a positive figure, not null.
    expect(typeof cost).toBe('number');
    expect(cost as number).toBeGreaterThan(0);
  });

  it('the facade: validated structured output and the raw text, as the comments say', async () => {
    const source = block('Quick start #2');
    const lines = await run(source);
    expect(lines).toEqual([['Rent rises 3% in May.'], ['{"summary":"Rent rises 3% in May."}']]);
    expectCommentsToMatch(source, lines);
  });
});

describe('README: Sub-agents', () => {
  it('runs as written and prints what its comments say', async () => {
    const lines = await run(block('Sub-agents'));
    expect(lines[0]).toEqual(['It applies from August, per three sources.']);
    expect(lines[1]).toEqual([['researcher']]);
    const total = lines[2]![0] as { inputTokens: number; outputTokens: number };
    expect(total.inputTokens).toBeGreaterThan(0);
  });
});

describe('README: Per-role models', () => {
  it('runs as written: the child asks for its own model on the shared provider, and each call is priced as its model', async () => {
    const source = block('Per-role models');
    const lines = await run(source);
    const says = promised(source);
    expect(lines[0]).toEqual(['The parties are ACME Ltd and Bob Smith.']);
    expect(says[0]).toBe(lines[0]![0]);
    expect(lines[1]).toEqual([['gpt-4o', 'gpt-4o-mini', 'gpt-4o']]);
    expect(says[1]).toBe("[ 'gpt-4o', 'gpt-4o-mini', 'gpt-4o' ]");
    // Two gpt-4o calls of 1,000 in / 100 out at 2.5 / 10 USD per MTok, one gpt-4o-mini call at 0.15 / 0.6.
    const expected = (2 * (1000 * 2.5 + 100 * 10) + (1000 * 0.15 + 100 * 0.6)) / 1e6;
    expect(lines[2]).toEqual([expected.toFixed(6)]);
    expect(says[2]!.startsWith(`${expected.toFixed(6)}:`)).toBe(true);
  });
});

describe('README: Structured output', () => {
  it("runs as written: the run's validated output, and the child's validated JSON as run_agent's result", async () => {
    const source = block('Structured output');
    const lines = await run(source);
    expect(lines).toEqual([['approve'], ['{"parties":["ACME Ltd","Bob Smith"]}'], ['delegated', { parties: ['ACME Ltd', 'Bob Smith'] }]]);
    expectCommentsToMatch(source, lines);
  });

  it("a child answer its outputType refuses reaches the parent's model as a tool message naming the field", async () => {
    const source = substitute(block('Structured output'), `'{"parties":["ACME Ltd","Bob Smith"]}'`, `'{"parties":"ACME Ltd"}'`);
    const lines = await run(source);
    expect(lines[0]).toEqual(['approve']);
    expect(String(lines[1]![0])).toMatch(/Sub-agent "extractor" failed: OutputValidationError: [\s\S]*expected array[\s\S]*at parties/);
    expect(lines[2]![0]).toBe('child_error');
  });
});

describe('README: Conversations', () => {
  it('runs as written: the second turn reads the first, the remembering child its own exchange, and the turns and cost are listed', async () => {
    const source = block('Conversations');
    const lines = await run(source);
    // Three calls a turn (router twice, orders once) of 400 in / 50 out at 2.5 / 10 USD per MTok.
    const turnCost = (3 * (400 * 2.5 + 50 * 10)) / 1e6;
    expect(lines[4]).toEqual(['completed', turnCost]);
    expect(lines[5]!.slice(0, 2)).toEqual([2, 2 * turnCost]);
    expectCommentsToMatch(source, lines);
  });
});

describe('README: Questions for the user', () => {
  it("runs as written: the model's question reaches the handler with the agent and scope, and the answer reaches the model", async () => {
    const source = block('Questions for the user');
    const lines = await run(source);
    expect(lines).toEqual([['travel asks u-42: Which city are you flying from?'], ['Booked: Oslo to Rome on Friday.']]);
    expectCommentsToMatch(source, lines);
  });
});

describe('README: Human in the loop', () => {
  it('runs as written: an approval two levels down suspends the tree, fresh agents resume it from the file once (approved, a second resume refused), and another declined', async () => {
    const source = block('Human in the loop');
    const lines = await run(source);
    expect(lines.map(rendered)).toEqual([
      'suspended',
      "approval billing 2 refund { orderId: 'A-17', amountUsd: 250 }",
      'completed true',
      'Desk: Support: Billing: refunded $250 on A-17',
      'SnapshotError',
      'Desk: Support: Billing: The user declined this call, so it did not run. The reason given: order was never shipped',
    ]);
    expectCommentsToMatch(source, lines);
  });

  it('runs as written: a budget suspends and is retried, a question is answered, a forged snapshot is refused', async () => {
    const source = block('Human in the loop #2');
    const lines = await run(source);
    expect(lines.map(rendered)).toEqual([
      "[ 'budget: maxTokens' ]",
      "[ 'question: Which city are you flying from?' ]",
      'SnapshotError',
      'completed Booked: Oslo to Rome.',
    ]);
    expectCommentsToMatch(source, lines);
  });
});

describe('README: MCP tools', () => {
  it("runs as written: the server's tool under its prefix, called by the model, its answer read back", async () => {
    const source = block('MCP tools');
    const lines = await run(source);
    expect(lines).toEqual([[['cal_free_slots']], ['Monday: 10:00, 14:30'], ['Monday at 10:00 or 14:30.']]);
    expectCommentsToMatch(source, lines);
  });
});

describe('README: Remote children (A2A)', () => {
  it('runs as written: the served agent answers the remote child over loopback', async () => {
    const source = block('Remote children (A2A)');
    const lines = await run(source);
    expect(lines).toEqual([['From the researcher: Three sources agree: August.'], [['researcher']]]);
    expectCommentsToMatch(source, lines);
  });

  it("the example's authenticate is what lets the call in: a wrong token is refused", async () => {
    const source = substitute(block('Remote children (A2A)'), "headers: { authorization: 'Bearer s3cret' }", "headers: { authorization: 'Bearer wrong' }");
    const lines = await run(source);
    expect(String(lines[0]![0])).not.toContain('Three sources agree');
    expect(String(lines[0]![0])).toMatch(/401|unauthori[sz]ed|authenticat/i);
  });
});

describe('README: Live runs', () => {
  it('runs as written: the delegation and the streamed answer arrive as events, then the callback counts the calls', async () => {
    const source = block('Live runs');
    const lines = await run(source);
    expect(lines).toEqual([['router → researcher'], ['It applies from August.'], [['researcher']], [1]]);
    expectCommentsToMatch(source, lines);
  });

  it('the live tree: drawn from onEvent and from a stream, the tree handed back with its state', async () => {
    const source = block('Live runs #2');
    const lines = await run(source);
    expect(lines).toEqual([[2], [['researcher ended']], ['router', 'ended', 'Fines reach 7% of turnover.']]);
    expectCommentsToMatch(source, lines);
  });
});

describe('README: Models from the AI SDK', () => {
  const serve = scriptedApi({ unscripted: { error: { message: 'the README test scripted no more replies' } }, basePath: '/v1' });
  afterEach(() => vi.unstubAllEnvs());

  it('runs a real @ai-sdk/openai model object against a Chat Completions server, as the comments say', async () => {
    const { baseURL, seen } = await serve([
      {
        body: {
          id: 'chatcmpl-1', object: 'chat.completion', created: 1741570283, model: 'gpt-4o-mini-2024-07-18',
          usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 },
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Bonjour !' } }],
        },
      },
    ]);
    vi.stubEnv('OPENAI_API_KEY', 'sk-readme-test');
    // Substitution: the one URL, so the SDK's own HTTP client talks to the loopback server above.
    const source = substitute(block('Models from the AI SDK'), "'https://api.openai.com/v1'", JSON.stringify(baseURL));
    const lines = await run(source);
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /v1/chat/completions']);
    expect(seen[0]!.headers.authorization).toBe('Bearer sk-readme-test');
    expect(seen[0]!.body).toMatchObject({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello in French.' }] });
    expectCommentsToMatch(source, lines);
  });
});

describe('README: Tracing delegation trees in Jaeger', () => {
  let receiver: Server | undefined;
  afterEach(async () => {
    receiver?.closeAllConnections();
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  });

  it("exports the run's spans and metrics over OTLP/HTTP and prints the traces URL", async () => {
    const received: { path: string; body: string }[] = [];
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const original = block('Tracing delegation trees in Jaeger');
    // Substitution: the endpoint given to startTelemetry (not the comment), so the export lands here.
    const source = substitute(original, "otlpEndpoint: 'http://localhost:4318'", `otlpEndpoint: '${endpoint}'`);
    const lines = await run(source);

    expect(lines).toEqual([[`${endpoint}/v1/traces`]]);
    expect(promised(original)).toEqual(['http://localhost:4318/v1/traces']);
    const traces = received.filter((r) => r.path === '/v1/traces').map((r) => r.body).join('\n');
    expect(traces).toContain('invoke_agent assistant');
    expect(traces).toContain('my-app');
    expect(traces).toContain('acme');
    const metrics = received.filter((r) => r.path === '/v1/metrics').map((r) => r.body).join('\n');
    expect(metrics).toContain('gen_ai.client.operation.duration');
    expect(metrics).toContain('my-app');
  });
});

describe('README: Budgets per tenant', () => {
  it('runs as written and prints the refusal by its field names: which tenant limit, its amount, the request', async () => {
    const source = block('Budgets per tenant');
    const lines = await run(source);
    const [tenantId, limitName, limit, spent, reserved, requested] = lines[0]!;
    expect([tenantId, limitName, limit, spent, reserved]).toEqual(['trial', 'maxTokens', 1000, 0, 0]);
    // The request is the estimated input plus the 2,048 output tokens the call reserves.
    expect(requested).toBeGreaterThan(2048);
    expect(requested).toBeLessThan(2048 + 100);
    // The comment under the log line is what it prints.
    expect(source).toContain(`// ${lines[0]!.join(' ')}   (`);
    expect(lines[1]).toEqual([{ inputTokens: 0, outputTokens: 0, source: 'reported' }]);
  });

  it('rethrows what is not a budget refusal', async () => {
    const source = block('Budgets per tenant');
    // The same program for a tenant with room, on a model that is down.
    const failing = substitute(
      substitute(source, "scope: { tenantId: 'trial' }", "scope: { tenantId: 'acme' }"),
      "scriptedModel(['Done.']",
      "scriptedModel([new Error('the model is down')]",
    );
    await expect(run(failing)).rejects.toThrow('the model is down');
  });
});

describe('README: Asserting lineage in your tests', () => {
  it('runs as written: the recorded tree has the router at its root and the researcher under it', async () => {
    const source = block('Asserting lineage in your tests');
    const lines = await run(source);
    expect(lines).toEqual([['router', true]]);
    expectCommentsToMatch(source, lines);
  });

  it("its assertion can fail: a tree that is not the one expected throws", async () => {
    const source = substitute(block('Asserting lineage in your tests'), "['researcher']);", "['someone else']);");
    await expect(run(source)).rejects.toThrow(/deepEqual|Expected values to be strictly deep-equal/);
  });
});

describe('README: set-up, CLI synopsis and guarantees', () => {
  const section = (heading: string) => {
    const at = README.indexOf(`\n## ${heading}\n`);
    if (at < 0) throw new Error(`README has no section "${heading}"`);
    const next = README.indexOf('\n## ', at + 1);
    return README.slice(at, next < 0 ? undefined : next);
  };

  it('names the two set-up commands, and the scripts they run exist', async () => {
    expect(README).toContain('npm ci && npm run demo');
    expect(README).toContain('npm test');
    const { scripts } = (await import(join(ROOT, 'package.json'), { with: { type: 'json' } })).default as { scripts: Record<string, string> };
    expect(Object.keys(scripts)).toEqual(expect.arrayContaining(['demo', 'test', 'build']));
  });

  it("the CLI synopsis names every command and option the CLI's help lists, and nothing else", () => {
    const synopsis = /```sh\n([\s\S]*?)```/.exec(section('The CLI'))![1]!;
    const cli = (...args: string[]) => {
      const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli/main.js'), ...args], { encoding: 'utf8', timeout: 30_000 });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout;
    };
    const options = (text: string) => new Set([...text.matchAll(/(?<![\w-])(--[a-z][a-z-]*)/g)].map((m) => m[1]!));
    const commands = ['demo', 'tree', 'budget'];
    for (const command of commands) expect(cli('--help')).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    const helped = new Set(commands.flatMap((c) => [...options(cli('help', c))]));
    helped.delete('--help');
    const shown = options(synopsis);
    shown.delete('--help');
    expect([...shown].sort()).toEqual([...helped].sort());
    for (const command of commands) expect(synopsis).toMatch(new RegExp(`^symfonic ${command}\\b`, 'm'));
  });

  it('every guarantee links to a test file that exists', () => {
    const bullets = section('Guarantees').split('\n- ').slice(1);
    expect(bullets.length).toBeGreaterThan(10);
    for (const bullet of bullets) {
      const links = [...bullet.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
      expect(links.length, bullet).toBeGreaterThan(0);
      for (const link of links) {
        expect(link, bullet).toMatch(/^test\//);
        expect(existsSync(join(ROOT, link)), link).toBe(true);
      }
    }
  });
});
