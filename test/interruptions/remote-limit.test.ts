/**
 * Pauses do not cross the A2A wire yet (issue 23): a served agent whose tool needs approval fails
 * its task with a message naming that limit, the caller's model reads it, and the tool never runs.
 * Over loopback, with serveAgent and remoteChild.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SymfonicAgent, defineTool } from '../../src/index.js';
import { serveAgent, type ServedAgent } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { bearer, collector, router } from '../remote/helpers.js';
import { toolResults } from './helpers.js';

let served: ServedAgent | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

describe('a remote child whose tool needs approval', () => {
  it('fails its task with a message naming the limit; the caller goes on and the tool never runs', async () => {
    let ran = 0;
    const wire = defineTool({ name: 'wire', description: 'Wires money.', input: z.object({}), needsApproval: true, execute: () => (ran++, 'wired') });
    const remoteModel = scriptedModel((req) => (toolResults(req).length === 0 ? { toolCalls: [{ name: 'wire', arguments: {} }] } : 'remote done'));
    const remote = new SymfonicAgent({ name: 'treasurer', modelProvider: remoteModel, tools: [wire], metricsCollector: collector() });
    served = await serveAgent(remote, { authenticate: bearer() });
    const caller = router({ name: 'treasurer', url: served.url, description: 'Moves money.' });
    const r = await caller.run('pay the supplier', { scope: { tenantId: 'acme' } });
    expect(r.status).toBe('completed');
    expect(r.interruptions).toEqual([]);
    expect(ran).toBe(0);
    const read = r.messages.find((m) => m.role === 'tool')!.content;
    expect(read).toMatch(/Sub-agent "treasurer" failed/);
    expect(read).toMatch(/cannot pass a pause across the wire yet/);
  });
});
