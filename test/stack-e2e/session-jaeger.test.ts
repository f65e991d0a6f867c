/**
 * Issue 31: `symfonic tree --session ID --tenant T --jaeger URL` draws every turn of a session
 * from the stack's Jaeger alone (no session store given): the turns are the session's root runs,
 * found by the `symfonic.session_id` and `symfonic.tenant_id` their spans carry. Their records and
 * totals are the ones the session store kept; another tenant's session of the same id and another
 * session of the tenant are not among them. Terminal, --json and --html.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemorySessionStore, MetricsCollector, SubAgentSpec, SymfonicAgent, priceTable, type AgentResponse, type SessionTurnRecord } from '../../src/index.js';
import { startTelemetry } from '../../src/telemetry/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { runCli } from '../cli/helpers.js';
import { jaegerSearch, otlpSpans, poll, stackUrls, uniqueName } from './support/stack.js';

const service = uniqueName('symfonic-e2e-session-tree');
const sessionId = uniqueName('chat');
const sessions = new InMemorySessionStore();
const usage = { inputTokens: 1000, outputTokens: 100 };
const collector = new MetricsCollector({ prices: priceTable({ 'scripted-model': { inputPerMTok: 1, outputPerMTok: 10 } }) });
const desk = new SymfonicAgent({
  name: 'desk',
  modelProvider: scriptedModel((request) => {
    const last = request.messages.at(-1)!;
    if (last.role === 'user') return { toolCalls: [{ name: 'run_agent', arguments: { name: 'billing', task: `billing: ${last.content}` } }], usage };
    return { text: `relayed: ${last.content}`, usage };
  }),
  sessions,
  metricsCollector: collector,
  subAgents: [new SubAgentSpec({ name: 'billing', description: 'Billing.', modelProvider: scriptedModel(() => ({ text: 'refund sent', usage })) })],
});
const turns: AgentResponse[] = [];
let records: readonly SessionTurnRecord[];

beforeAll(async () => {
  const telemetry = startTelemetry({ otlpEndpoint: stackUrls().otlp, serviceName: service, exportTimeoutMs: 5_000 });
  const t0 = Date.now();
  try {
    for (const q of ['Why was I charged twice?', 'Can I get a refund?', 'Thanks!']) turns.push(await desk.run(q, { scope: { tenantId: 'acme', sessionId } }));
    // The same session id in another tenant, and another session of this tenant: neither is this session.
    await desk.run('Hello', { scope: { tenantId: 'globex', sessionId } });
    await desk.run('Other chat', { scope: { tenantId: 'acme', sessionId: `${sessionId}-other` } });
    await telemetry.flush();
  } finally {
    await telemetry.shutdown();
  }
  await poll(
    () => jaegerSearch(service, t0 - 5_000, Date.now() + 5_000),
    (a) => a !== null && new Set(otlpSpans(a).map((s) => s.traceId)).size >= 5,
    { timeoutMs: 60_000, intervalMs: 1_000 },
  );
  records = await desk.session('acme', sessionId).turns();
}, 120_000);
afterAll(async () => {
  await sessions.clear('acme', sessionId);
});

const tree = (...more: string[]) => runCli(['tree', '--session', sessionId, '--tenant', 'acme', '--jaeger', stackUrls().jaeger, ...more], { env: { NO_COLOR: '1' } });

describe('symfonic tree --session ID --jaeger URL, without the session store', () => {
  it("lists each turn from its trace, oldest first, with the tree under it and the session's totals", async () => {
    const r = await tree('--width', '120');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const turnLines = r.stdout.split('\n').filter((l) => l.startsWith('turn '));
    expect(turnLines).toHaveLength(3);
    turns.forEach((t, i) => {
      expect(turnLines[i]).toMatch(new RegExp(`^turn ${i + 1}  completed  ${t.totalUsage.inputTokens + t.totalUsage.outputTokens} tokens  \\$[0-9.]+  run ${t.rootRunId}  trace ${t.traceId}`));
    });
    expect(r.stdout).toContain('billing');
    const totals = await desk.session('acme', sessionId).totals();
    expect(r.stdout.trim().split('\n').at(-1)).toBe(`session ${sessionId}: 3 turns, ${totals.usage.inputTokens + totals.usage.outputTokens} tokens, $${totals.costUsd}`);
  });

  it('answers --json with the records the session store kept', async () => {
    const r = await tree('--json');
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { turns: SessionTurnRecord[]; total: { usage: { inputTokens: number; outputTokens: number }; costUsd: number; turns: number } };
    const fields = (t: SessionTurnRecord) => [t.rootRunId, t.traceId, t.agent, t.status, t.totalUsage.inputTokens, t.totalUsage.outputTokens, t.totalCostUsd];
    expect(doc.turns.map(fields)).toEqual(records.map(fields));
    const totals = await desk.session('acme', sessionId).totals();
    expect(doc.total).toMatchObject({ turns: 3, costUsd: totals.costUsd, usage: { inputTokens: totals.usage.inputTokens, outputTokens: totals.usage.outputTokens } });
  });

  it('writes every turn on one page with --html', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'symfonic-session-')), 'session.html');
    const r = await tree('--html', file);
    expect(r.code, r.stderr).toBe(0);
    const page = readFileSync(file, 'utf8');
    expect(page).toContain(`session ${sessionId}: 3 turns`);
    for (const t of turns) expect(page).toContain(t.rootRunId);
    expect(page).toContain(`Jaeger at ${stackUrls().jaeger}`);
  });

  it('says when Jaeger holds no turn of the session', async () => {
    const r = await runCli(['tree', '--session', `${sessionId}-never`, '--tenant', 'acme', '--jaeger', stackUrls().jaeger]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/holds no finished turn of session/);
  });
});
