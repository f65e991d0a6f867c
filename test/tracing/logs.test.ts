/**
 * Log lines, read back from a real pino stream: each carries its run's lineage and the ids of
 * that run's invoke_agent span, so a line in a log store finds its trace. And an agent given no
 * logger writes nothing to the process's stdout.
 */
import fs from 'node:fs';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SubAgent, SymfonicAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { collectingLogger } from '../support/logging.js';
import { recordEachTest } from '../support/per-test.js';
import { invokeSpan, ROOT_QUERY, threeLevelTree } from './helpers.js';

const rec = recordEachTest();
afterEach(() => {
  vi.restoreAllMocks();
});

const LINEAGE_FIELDS = ['run_id', 'root_run_id', 'parent_run_id', 'tenant_id', 'trace_id', 'span_id'];

describe('pino log lines', () => {
  it("every run's lines carry its lineage and its invoke_agent span's trace_id and span_id", async () => {
    const { logger, lines: all } = collectingLogger('debug');
    const { assistant } = threeLevelTree({ logger });
    const response = await assistant.run(ROOT_QUERY, { scope: { tenantId: 'acme' } });
    expect(all.length).toBeGreaterThan(0);
    for (const line of all) {
      for (const f of LINEAGE_FIELDS) expect(line, `line "${String(line.msg)}" lacks ${f}`).toHaveProperty([f]);
    }
    const spans = rec.spans();
    const expectations = [
      { agent: 'assistant', parent: null },
      { agent: 'researcher', parent: 'assistant' },
      { agent: 'fetcher', parent: 'researcher' },
    ];
    const runIdOf = (agent: string) => invokeSpan(spans, agent).attributes['symfonic.run_id'] as string;
    for (const e of expectations) {
      const span = invokeSpan(spans, e.agent);
      const runId = runIdOf(e.agent);
      const mine = all.filter((l) => l.run_id === runId);
      // at least "run started" and "run finished" at debug level
      expect(mine.length, `lines of ${e.agent}`).toBeGreaterThanOrEqual(2);
      for (const l of mine) {
        expect(l).toMatchObject({
          root_run_id: response.runId,
          parent_run_id: e.parent === null ? null : runIdOf(e.parent),
          tenant_id: 'acme',
          trace_id: span.spanContext().traceId,
          span_id: span.spanContext().spanId,
        });
      }
    }
    // Every line belongs to one of the three runs.
    const runIds = new Set(expectations.map((e) => runIdOf(e.agent)));
    expect(all.every((l) => runIds.has(l.run_id as string))).toBe(true);
  });

  it("a tool's ctx.logger line is its run's, at the level it asked for", async () => {
    const { logger, lines } = collectingLogger('info');
    const { assistant } = threeLevelTree({ logger });
    await assistant.run(ROOT_QUERY, { scope: { tenantId: 'acme' } });
    const fetcher = invokeSpan(rec.spans(), 'fetcher');
    const toolLines = lines.filter((l) => l.msg === 'lookup called');
    expect(toolLines).toHaveLength(1);
    expect(toolLines[0]).toMatchObject({
      level: 30,
      query: 'Paris',
      run_id: fetcher.attributes['symfonic.run_id'],
      tenant_id: 'acme',
      trace_id: fetcher.spanContext().traceId,
      span_id: fetcher.spanContext().spanId,
    });
    // info level: the debug run-start/finish lines are filtered out by pino itself
    expect(lines.some((l) => l.msg === 'run started')).toBe(false);
  });

  it('a run without a scope logs tenant_id null rather than leaving it out', async () => {
    const { logger, lines } = collectingLogger('debug');
    const agent = new SymfonicAgent({ name: 'solo', modelProvider: scriptedModel(['hi']), logger });
    const r = await agent.run('hello');
    const mine = lines.filter((l) => l.run_id === r.runId);
    expect(mine.length).toBeGreaterThan(0);
    for (const l of mine) expect(l).toMatchObject({ tenant_id: null, parent_run_id: null, root_run_id: r.runId });
  });
});

describe('the default logger', () => {
  /**
   * Watches everything that could reach the process's stdout: process.stdout.write, and the
   * fs writes pino's default destination (sonic-boom) makes on fd 1 directly. Writes are
   * swallowed so a failing check does not also spray the test output.
   */
  function watchStdout() {
    const seen: string[] = [];
    const toStdout = (fd: unknown) => fd === 1 || fd === process.stdout.fd;
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
      seen.push(String(chunk));
      return true;
    });
    const realWriteSync = fs.writeSync;
    vi.spyOn(fs, 'writeSync').mockImplementation(((fd: number, buf: unknown, ...rest: unknown[]) => {
      if (!toStdout(fd)) return (realWriteSync as (...a: unknown[]) => number)(fd, buf, ...rest);
      seen.push(String(buf));
      return Buffer.byteLength(typeof buf === 'string' ? buf : (buf as Buffer));
    }) as typeof fs.writeSync);
    const realWrite = fs.write;
    vi.spyOn(fs, 'write').mockImplementation(((fd: number, buf: unknown, ...rest: unknown[]) => {
      if (!toStdout(fd)) return (realWrite as (...a: unknown[]) => void)(fd, buf, ...rest);
      seen.push(String(buf));
      const cb = rest[rest.length - 1] as (err: null, n: number) => void;
      process.nextTick(() => cb(null, Buffer.byteLength(typeof buf === 'string' ? buf : (buf as Buffer))));
    }) as typeof fs.write);
    return seen;
  }

  it('the watcher sees a default pino logger writing to stdout (so the next test can fail)', async () => {
    const seen = watchStdout();
    const loud = pino({ level: 'info' });
    loud.info('visible');
    loud.flush?.();
    await new Promise((r) => setImmediate(r));
    expect(seen.join('')).toContain('visible');
  });

  it('is silent: a tree with tool logs, a failing child and a warn writes nothing to stdout', async () => {
    const seen = watchStdout();
    const { assistant } = threeLevelTree();
    const failing = new SymfonicAgent({ name: 'broken', modelProvider: scriptedModel(() => new Error('boom')) });
    const parent = new SymfonicAgent({
      name: 'top',
      modelProvider: scriptedModel([
        { toolCalls: [{ name: 'run_agent', arguments: { name: 'broken', task: 'fail' } }] },
        'recovered',
      ]),
      subAgents: [new SubAgent({ name: 'broken', agent: failing, description: 'always fails' })],
    });
    const [a, b] = await Promise.all([assistant.run(ROOT_QUERY, { scope: { tenantId: 'acme' } }), parent.run('go')]);
    await expect(failing.run('direct failure')).rejects.toThrow('boom');
    await new Promise((r) => setImmediate(r));
    expect(a.finalResponse).toBe('Paris is sunny today.');
    expect(b.finalResponse).toBe('recovered');
    expect(seen).toEqual([]);
  });
});
