/**
 * A wrapper child that composes two agents — the commonest wrapper there is: a writer, then an
 * editor on the draft — spends as its delegator's child for both. The first symfonic run inside
 * the wrapper takes the placement (the delegator's ledger, tenant and budget). The second was "a
 * root of its own" accounted in whatever ledger its agent had — for an agent built without one, a
 * private collector with no budgets — and the adapter reads the reply's figures only when no run
 * reported (foreignOutcome prefers the first run's report): the editor's spend reached neither
 * the delegator's totals nor its tenant's ledger or budget store, and the tenant's budget did not
 * hold it. Passing the options on, it also ran under the first run's id.
 */
import { describe, expect, it } from 'vitest';
import { BudgetExceededError, FrameworkConfig, InMemoryBudgetStore, MetricsCollector, SubAgent, SymfonicAgent, TenantBudgets, type ChildAgent, type ChildRunOptions } from '../../src/index.js';
import { recordTelemetry, scriptedModel, type TelemetryRecording } from '../../src/testing/index.js';

const scope = { tenantId: 'acme' };
const ROOT = { inputTokens: 10, outputTokens: 1 };
const WRITER = { inputTokens: 100, outputTokens: 10 };
const EDITOR = { inputTokens: 1000, outputTokens: 100 };
const tokensOf = (u: { inputTokens: number; outputTokens: number }) => u.inputTokens + u.outputTokens;

type Compose = (writer: SymfonicAgent, editor: SymfonicAgent) => ChildAgent;

/** The user's own composition, passing on the options the child was given (as the refusal for another tenant's scope advises). */
const inTurn: Compose = (writer, editor) => ({
  run: async (task: string, options: ChildRunOptions) => {
    const draft = await writer.run(task, options as never);
    return editor.run(draft.finalResponse, options as never);
  },
});

function tree(collector: MetricsCollector, o: { config?: FrameworkConfig; editorLedger?: MetricsCollector; compose?: Compose } = {}) {
  const config = o.config ? { config: o.config } : {};
  const writer = new SymfonicAgent({ name: 'writer', ...config, modelProvider: scriptedModel(() => ({ text: 'a draft', usage: WRITER })) });
  const editor = new SymfonicAgent({ name: 'editor', ...config, ...(o.editorLedger ? { metricsCollector: o.editorLedger } : {}), modelProvider: scriptedModel(() => ({ text: 'an edited draft', usage: EDITOR })) });
  return new SymfonicAgent({
    name: 'root',
    metricsCollector: collector,
    ...config,
    modelProvider: scriptedModel((req) => (req.messages.some((m) => m.role === 'tool') ? { text: 'done', usage: ROOT } : { toolCalls: [{ name: 'run_agent', arguments: { name: 'pair', task: 'write it' } }], usage: ROOT })),
    // A wrapper is a child the delegator cannot see into, so it holds `reserve` before the wrapper
    // runs; small here, so that the 1,000-token budget below is decided by what the runs spend.
    subAgents: [new SubAgent({ name: 'pair', agent: (o.compose ?? inTurn)(writer, editor), description: 'Writes and edits.', reserve: { tokens: 50 } })],
  });
}

const budgeted = (store: InMemoryBudgetStore, maxTokens: number) => new MetricsCollector({ budgets: new TenantBudgets({ defaultLimit: { maxTokens }, store }) });
const ALL = 2 * tokensOf(ROOT) + tokensOf(WRITER) + tokensOf(EDITOR);

describe('a wrapper child that runs two agents, one after the other', () => {
  it("the second agent's spend reaches the delegator's totals, tenant ledger and budget store", async () => {
    const store = new InMemoryBudgetStore();
    const collector = budgeted(store, 1_000_000);
    const r = await tree(collector).run('go', { scope });
    expect(r.finalResponse).toBe('done');
    expect(tokensOf(r.totalUsage)).toBe(ALL);
    expect(tokensOf(collector.tenant('acme').usage)).toBe(ALL);
    expect(store.usage('acme', undefined, Date.now()).spent.tokens).toBe(ALL);
    expect(collector.openRuns).toBe(0);
  });

  it("the second agent is held to the delegator's tenant budget", async () => {
    // 1,000 tokens for acme: the writer (110) and the editor (1,100) pass it, so the root's next
    // call must be refused. Calls reserve little (maxTokens 10), so only settled spend decides.
    const store = new InMemoryBudgetStore();
    await expect(tree(budgeted(store, 1_000), { config: new FrameworkConfig({ model: { maxTokens: 10 } }) }).run('go', { scope })).rejects.toBeInstanceOf(BudgetExceededError);
  });

  describe('traced', () => {
    let rec: TelemetryRecording;
    it('each run has a run id of its own, under the delegator', async () => {
      rec = recordTelemetry();
      try {
        const r = await tree(new MetricsCollector()).run('go', { scope });
        const runs = rec.spans().filter((s) => s.name.startsWith('invoke_agent '));
        const ids = runs.map((s) => s.attributes['symfonic.run_id']);
        expect(new Set(ids).size).toBe(ids.length);
        for (const name of ['invoke_agent writer', 'invoke_agent editor']) {
          const span = runs.find((s) => s.name === name)!;
          expect(span.attributes['symfonic.parent_run_id']).toBe(r.runId);
          expect(span.attributes['symfonic.tenant_id']).toBe('acme');
        }
      } finally {
        await rec.shutdown();
      }
    });
  });

  it('run side by side with the options passed on to both: both run, both charged', async () => {
    const store = new InMemoryBudgetStore();
    const collector = budgeted(store, 1_000_000);
    const both: Compose = (writer, editor) => ({
      run: async (task: string, options: ChildRunOptions) => {
        const [a, b] = await Promise.all([writer.run(task, options as never), editor.run(task, options as never)]);
        return { finalResponse: `${a.finalResponse} / ${b.finalResponse}` };
      },
    });
    const r = await tree(collector, { compose: both }).run('go', { scope });
    expect(r.messages.find((m) => m.role === 'tool')!.content).toBe('a draft / an edited draft');
    expect(store.usage('acme', undefined, Date.now()).spent.tokens).toBe(ALL);
  });

  // An editor with a ledger of its own accounts there; the adapter takes in what it reported as
  // it closed, beside the first run's answer, so the delegator's totals and store hold it too.
  it("a second agent with a ledger of its own is taken in from what it reported", async () => {
    const store = new InMemoryBudgetStore();
    const collector = budgeted(store, 1_000_000);
    const r = await tree(collector, { editorLedger: new MetricsCollector() }).run('go', { scope });
    expect(tokensOf(r.totalUsage)).toBe(ALL);
    expect(store.usage('acme', undefined, Date.now()).spent.tokens).toBe(ALL);
  });
});
