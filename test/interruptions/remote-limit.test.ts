/**
 * A remote child's pause is the caller's (issue 23 lifted the limit issue 20 left): a served
 * agent whose tool needs approval suspends the caller's tree with its interruption, the tool
 * unrun, and the decision resumes it on the server. Over loopback, with serveAgent and remoteChild.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SymfonicAgent, defineTool } from '../../src/index.js';
import { serveAgent, type ServedAgent } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { bearer, collector, router } from '../remote/helpers.js';
import { decideAll, toolResults } from './helpers.js';

let served: ServedAgent | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

describe('a remote child whose tool needs approval', () => {
  it("suspends the caller's tree with the remote interruption (no longer a failure); approved, the tool runs once", async () => {
    let ran = 0;
    const wire = defineTool({ name: 'wire', description: 'Wires money.', input: z.object({}), needsApproval: true, execute: () => (ran++, 'wired') });
    const remoteModel = scriptedModel((req) => (toolResults(req).length === 0 ? { toolCalls: [{ name: 'wire', arguments: {} }] } : `remote ${toolResults(req)[0]}`));
    const remote = new SymfonicAgent({ name: 'treasurer', modelProvider: remoteModel, tools: [wire], metricsCollector: collector() });
    served = await serveAgent(remote, { authenticate: bearer() });
    const caller = router({ name: 'treasurer', url: served.url, description: 'Moves money.' });
    const r = await caller.run('pay the supplier', { scope: { tenantId: 'acme' } });
    expect(r.status).toBe('suspended');
    expect(r.interruptions).toMatchObject([{ kind: 'approval', agent: 'treasurer', tool: 'wire', depth: 1 }]);
    expect(ran).toBe(0);
    const done = await caller.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    expect(done.finalResponse).toBe('done [remote wired]');
    expect(ran).toBe(1);
  });
});
