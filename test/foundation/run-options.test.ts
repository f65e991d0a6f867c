import { describe, expect, it } from 'vitest';
import { ConfigurationError, SymfonicAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

describe('run options', () => {
  const agent = () => new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['ok']) });

  it('refuses a root run whose rootRunId is not its own run id', async () => {
    await expect(agent().run('q', { rootRunId: 'someone-else' })).rejects.toThrow(ConfigurationError);
    await expect(agent().run('q', { runId: 'r1', rootRunId: 'r2' })).rejects.toThrow(/a root's rootRunId is its own runId/);
  });

  it('accepts a root run that names itself as its root', async () => {
    const reply = await agent().run('q', { runId: 'r1', rootRunId: 'r1' });
    expect(reply.rootRunId).toBe('r1');
  });

  it('refuses a child run under its parent id, and a parent without a root', async () => {
    await expect(agent().run('q', { runId: 'p', parentRunId: 'p', rootRunId: 'p' })).rejects.toThrow(/never runs under its parent's id/);
    await expect(agent().run('q', { parentRunId: 'p' })).rejects.toThrow(/without rootRunId/);
  });
});
