/**
 * docs/telemetry-names.md lists every span attribute, span event and metric name symfonic
 * writes: each name in the source's tables appears on the page, in backticks. README links the
 * page; a name added in code and not there fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUDGET_ATTR, BUDGET_METRIC } from '../../src/budget/budget-metrics.js';
import { LEASES_LAPSED_METRIC, STORE_DATA_LOST_METRIC, STORE_UNAVAILABLE_METRIC } from '../../src/budget/redis/redis-store-metrics.js';
import { ATTR, METRIC, SPAN_EVENT } from '../../src/observability/attributes.js';

const page = readFileSync(new URL('../../docs/telemetry-names.md', import.meta.url), 'utf8');
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('docs/telemetry-names.md', () => {
  it('names every attribute, span event and metric the source defines', () => {
    const names = [
      ...Object.values(ATTR),
      ...Object.values(SPAN_EVENT),
      ...Object.values(METRIC),
      ...Object.values(BUDGET_METRIC),
      ...Object.values(BUDGET_ATTR),
      STORE_UNAVAILABLE_METRIC,
      STORE_DATA_LOST_METRIC,
      LEASES_LAPSED_METRIC,
    ];
    expect(names.filter((n) => !page.includes(`\`${n}\``))).toEqual([]);
  });

  it('README links it, and names the lineage keys as spans carry them', () => {
    expect(readme).toContain('docs/telemetry-names.md');
    expect(readme).toMatch(/`symfonic\.run_id`, `symfonic\.root_run_id` and `symfonic\.parent_run_id`/);
  });
});
