import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SubAgent, SubAgentSpec, SymfonicAgent, defineTool } from '../../src/index.js';
import { serveAgent, type ServedAgent } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { bearer } from './helpers.js';

let served: ServedAgent | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

describe('the agent card of a served router', () => {
  it("lists its children, in roster order with when to use them, and its own tools as skills; not the delegation tools", async () => {
    const lookup = defineTool({ name: 'lookup', description: 'Looks a term up.', input: z.object({ term: z.string() }), execute: () => 'x' });
    const router = new SymfonicAgent({
      name: 'router',
      description: 'Routes questions.',
      modelProvider: scriptedModel([]),
      tools: [lookup],
      subAgents: [
        new SubAgentSpec({ name: 'researcher', description: 'Finds sources.', whenToUse: 'for facts' }),
        new SubAgent({ name: 'writer', agent: { run: async () => ({ finalResponse: '' }) }, description: 'Writes prose.' }),
      ],
    });
    served = await serveAgent(router, { authenticate: bearer() });
    const card = (await (await fetch(`${served.url}/.well-known/agent-card.json`)).json()) as { name: string; description: string; skills: { id: string; description: string }[] };
    expect(card.name).toBe('router');
    expect(card.skills.map((s) => s.id)).toEqual(['researcher', 'writer', 'lookup']);
    expect(card.skills[0]!.description).toBe('Finds sources. When to use: for facts');
    expect(card.skills.map((s) => s.id)).not.toContain('run_agent');
  });
});
