/**
 * Operators see it: budget metrics go from TenantBudgets through the collector to Prometheus, and
 * the stack's Prometheus (loading collector/budget-alerts.yml) fires TenantBudgetThreshold for a
 * tenant past 80% of its limit, and not for a tenant below it.
 */
import { describe, expect, it } from 'vitest';
import { RedisBudgetStore } from '../../../src/budget/redis/redis-budget-store.js';
import { TenantBudgets, type TenantLimit } from '../../../src/index.js';
import { startTelemetry } from '../../../src/telemetry/index.js';
import { poll, promQuery, stackUrls, uniqueName } from '../support/stack.js';
import { uniquePrefix } from './redis-server.js';

interface Alert {
  labels: Record<string, string>;
  state: string;
}

async function alerts(): Promise<Alert[]> {
  const r = await fetch(`${stackUrls().prometheus}/api/v1/alerts`);
  return ((await r.json()) as { data: { alerts: Alert[] } }).data.alerts;
}

describe('budget alerts in Prometheus', () => {
  it('TenantBudgetThreshold fires for a tenant past 80% of its limit, by tenant and limit; user ids are no label', async () => {
    const hot = uniqueName('hot');
    const cool = uniqueName('cool');
    const telemetry = startTelemetry({ otlpEndpoint: stackUrls().otlp, serviceName: uniqueName('symfonic-e2e-budget'), metrics: { intervalMs: 500 } });
    const store = new RedisBudgetStore({ redis: stackUrls().redis, keyPrefix: uniquePrefix('alerts') });
    try {
      const limit: TenantLimit = { maxTokens: 1000, perUser: { maxTokens: 900 }, thresholds: [0.8] };
      const budgets = new TenantBudgets({ limits: { [hot]: limit, [cool]: limit }, store });
      for (const [tenantId, used] of [
        [hot, 850],
        [cool, 300],
      ] as const) {
        const scope = { tenantId, userId: 'alice@example.com' };
        const r = await budgets.reserve(scope, limit, { tokens: used, costUsd: 0 });
        if (!r.ok) throw new Error('refused');
        await budgets.settle(scope, limit, r.reservationId, { tokens: used, costUsd: 0 });
      }
      await telemetry.flush();
      const firing = await poll(
        async () => (await alerts()).filter((a) => a.labels['alertname'] === 'TenantBudgetThreshold' && (a.labels['symfonic_tenant_id'] === hot || a.labels['symfonic_tenant_id'] === cool)),
        (got) => got.some((a) => a.state === 'firing'),
        { timeoutMs: 45_000, intervalMs: 1000 },
      );
      expect(firing.map((a) => [a.labels['symfonic_tenant_id'], a.labels['symfonic_budget_limit'], a.labels['severity'], a.state])).toEqual([[hot, 'maxTokens', 'warning', 'firing']]);
      // The crossing itself is counted too, by tenant, level, limit and threshold.
      const crossings = await promQuery(`sum by (symfonic_tenant_id, symfonic_budget_level, symfonic_budget_threshold) (symfonic_budget_thresholds_total{symfonic_tenant_id="${hot}"})`);
      expect(crossings.map((s) => [s.metric['symfonic_budget_level'], s.metric['symfonic_budget_threshold'], Number(s.value[1])]).sort()).toEqual([
        ['tenant', '0.8', 1],
        ['user', '0.8', 1],
      ]);
      // Spend by tenant and level; no series carries a user id unless the app asks for it.
      const spend = await promQuery(`{__name__=~"symfonic_budget_settled_tokens.*", symfonic_tenant_id="${hot}"}`);
      expect(spend.map((s) => s.metric['symfonic_budget_level']).sort()).toEqual(['tenant', 'user']);
      expect(spend.every((s) => s.metric['symfonic_user_id'] === undefined)).toBe(true);
    } finally {
      await store.close();
      await telemetry.shutdown();
    }
  }, 90_000);
});
