// @ts-check
// The untraced leaf in a tight loop, for profiling and A/B pairs: no SDK, one scripted model call
// a run. `plain` runs it with prices only; `budget` adds a tenant budget, so each call reserves and
// settles in memory. Prints the best of 6 rounds of 20,000 runs, µs a run.
// Usage: node bench/leaf-loop.js plain|budget (or with --cpu-prof).
import { MetricsCollector, SymfonicAgent, TenantBudgets, priceTable } from '../dist/index.js';
import { scriptedModel } from '../dist/testing/index.js';
const mode = process.argv[2];
if (mode !== 'plain' && mode !== 'budget') {
  process.stderr.write('usage: node bench/leaf-loop.js plain|budget\n');
  process.exit(2);
}
const prices = priceTable({ 'scripted-model': { inputPerMTok: 3, outputPerMTok: 15 } });
const collector = mode === 'budget' ? new MetricsCollector({ prices, budgets: new TenantBudgets({ limits: { t: { maxTokens: 1e15, maxCostUsd: 1e12 } } }) }) : new MetricsCollector({ prices });
const turn = Object.freeze({ text: 'x', usage: { inputTokens: 120, outputTokens: 40 } });
const m = scriptedModel(() => turn);
const leaf = new SymfonicAgent({ name: 'leaf', modelProvider: m, metricsCollector: collector });
const opts = Object.freeze({ scope: Object.freeze({ tenantId: 't', userId: 'u' }) });
let best = Infinity;
for (let r = 0; r < 6; r++) {
  const t = process.hrtime.bigint();
  for (let i = 0; i < 20000; i++) { await leaf.run('q', opts); if (i % 1000 === 0) m.calls.length = 0; }
  best = Math.min(best, Number(process.hrtime.bigint() - t) / 20000 / 1000);
}
console.log(mode, 'best leaf us', best.toFixed(2));
