/**
 * Issue 29: a run that names another tree's root with a parent not of that tree is refused by the
 * ledger, but its `invoke_agent` span was started first and exported, labelled with the victim's
 * root and tenant: exactly what the refusal exists to prevent. A refused run exports no span
 * carrying them, in process and over A2A. The real OTel SDK records the spans (recordTelemetry).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, MetricsCollector, SPAN_ATTRIBUTES as ATTR, SymfonicAgent } from '../../src/index.js';
import { serveAgent, type ServedAgent } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { baggage, bearer, post, sendMessageBody } from '../remote/helpers.js';

const rec = recordEachTest();
const open: ServedAgent[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const VICTIM_ROOT = 'root-of-acme';

/** A root run of tenant acme that waits until released: the tree a spoof names. */
function victimOn(collector: MetricsCollector) {
  let release!: () => void;
  const model = scriptedModel(() => new Promise((r) => (release = () => r('done'))));
  const victim = new SymfonicAgent({ name: 'victim', modelProvider: model, metricsCollector: collector });
  const running = victim.run('wait', { scope: { tenantId: 'acme' }, runId: VICTIM_ROOT });
  return { running, release: () => release() };
}

/** Every span that claims the victim's tree or tenant, and does not come from the victim's own run. */
function claimsOfOthers() {
  return rec
    .spans()
    .filter((s) => s.attributes[ATTR.rootRunId] === VICTIM_ROOT || s.attributes[ATTR.tenantId] === 'acme')
    .filter((s) => s.attributes[ATTR.runId] !== VICTIM_ROOT)
    .map((s) => ({ name: s.name, attributes: s.attributes }));
}

describe('a refused spoofed root exports no span labelled with its victim', () => {
  it('in process: the refusal stands, and no span names the victim root or tenant but the victim', async () => {
    const collector = new MetricsCollector();
    const victim = victimOn(collector);
    await new Promise((r) => setTimeout(r, 10));
    const spoofModel = scriptedModel(['x']);
    const spoof = new SymfonicAgent({ name: 'spoof', modelProvider: spoofModel, metricsCollector: collector });
    const refused = await spoof.run('q', { scope: { tenantId: 'acme' }, rootRunId: VICTIM_ROOT, parentRunId: 'made-up-parent' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toMatch(/names "root-of-acme" as its root.*not a run of that tree/s);
    expect(spoofModel.calls).toHaveLength(0);
    victim.release();
    await victim.running;
    expect(rec.spans().some((s) => s.attributes[ATTR.runId] === VICTIM_ROOT)).toBe(true);
    expect(claimsOfOthers()).toEqual([]);
  });

  it('over A2A: a caller whose baggage names a live root of the server is refused, and the server exports no span labelled with it', async () => {
    const collector = new MetricsCollector();
    const victim = victimOn(collector);
    const servedModel = scriptedModel(['served']);
    const served = new SymfonicAgent({ name: 'researcher', modelProvider: servedModel, description: 'Finds.', metricsCollector: collector });
    const server = await serveAgent(served, { authenticate: bearer(['acme']) });
    open.push(server);
    const r = await post(server.url, sendMessageBody('find'), {
      baggage: baggage({ 'symfonic.tenant_id': 'acme', 'symfonic.root_run_id': VICTIM_ROOT, 'symfonic.parent_run_id': 'made-up-parent', 'symfonic.agent_depth': 0 }),
    });
    expect(JSON.stringify(r.json)).toMatch(/names \\"root-of-acme\\" as its root|not a run of that tree/);
    expect(servedModel.calls).toHaveLength(0);
    victim.release();
    await victim.running;
    expect(claimsOfOthers()).toEqual([]);
  });
});
