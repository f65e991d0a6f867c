/**
 * Scope is what governs data access across a delegation tree, so nothing inside a run may change
 * it: not a tool holding `ctx.scope`, not the caller mutating the object it passed in after the
 * run started. A child delegated afterwards still acts for the original tenant.
 */
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { SubAgent, defineTool, type Scope } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { deferred } from '../support/async.js';
import { rigEachTest, spansNamed, toolMessages } from './rig.js';

const r = rigEachTest();

/** Runs `attempt` and returns what it threw (or null). */
function thrown(attempt: () => void): unknown {
  try {
    attempt();
    return null;
  } catch (error) {
    return error;
  }
}

type Mutable = { tenantId: string; userId?: string; attributes?: Record<string, string> };

/** A child whose tool reports the scope it runs under. */
function scopeReporter() {
  const seen: (Scope | undefined)[] = [];
  const whoami = defineTool({
    name: 'whoami',
    description: 'Reports the scope.',
    input: z.object({}),
    execute: (_input, ctx) => {
      seen.push(ctx.scope);
      return JSON.stringify(ctx.scope);
    },
  });
  const child = r.agent({
    name: 'child',
    tools: [whoami],
    modelProvider: scriptedModel((req) => (req.messages.some((m) => m.role === 'tool') ? 'reported' : { toolCalls: [{ name: 'whoami', arguments: {} }] })),
  });
  return { child, seen };
}

describe('ctx.scope is frozen', () => {
  it('a tool that assigns or adds to it gets TypeErrors, and the child delegated next still sees the original', async () => {
    const attempts: Record<string, unknown> = {};
    const tamper = defineTool({
      name: 'tamper',
      description: 'Tries to change the scope.',
      input: z.object({}),
      execute: (_input, ctx) => {
        const s = ctx.scope as Mutable;
        attempts.assignTenant = thrown(() => {
          s.tenantId = 'evil';
        });
        attempts.assignUser = thrown(() => {
          s.userId = 'mallory';
        });
        attempts.addAttribute = thrown(() => {
          s.attributes!.role = 'admin';
        });
        attempts.changeAttribute = thrown(() => {
          s.attributes!.plan = 'enterprise';
        });
        attempts.replaceAttributes = thrown(() => {
          s.attributes = { plan: 'enterprise' };
        });
        attempts.deleteTenant = thrown(() => {
          delete (s as Partial<Mutable>).tenantId;
        });
        attempts.defineProperty = thrown(() => Object.defineProperty(s, 'tenantId', { value: 'evil' }));
        return 'tried';
      },
    });
    const { child, seen } = scopeReporter();
    const parent = r.agent({
      name: 'parent',
      tools: [tamper],
      subAgents: [new SubAgent({ name: 'child', agent: child, description: 'reports its scope' })],
      modelProvider: scriptedModel([
        { toolCalls: [{ name: 'tamper', arguments: {} }] },
        { toolCalls: [{ name: 'run_agent', arguments: { name: 'child', task: 'who am I?' } }] },
        'done',
      ]),
    });
    const original = { tenantId: 'acme', userId: 'ann', attributes: { plan: 'free' } };
    await parent.run('go', { scope: original });

    for (const [what, error] of Object.entries(attempts)) {
      expect(error, what).toBeInstanceOf(TypeError);
    }
    expect(seen).toEqual([original]);
    expect(Object.isFrozen(seen[0])).toBe(true);
    expect(Object.isFrozen(seen[0]!.attributes)).toBe(true);
    for (const s of spansNamed(r.rec, '')) expect(s.attributes['symfonic.tenant_id'], s.name).toBe('acme');
    r.settled();
  });

  it('a tool that does not catch the TypeError fails only its own call; the run goes on under the original scope', async () => {
    const tamper = defineTool({
      name: 'tamper',
      description: 'Tries to change the scope.',
      input: z.object({}),
      execute: (_input, ctx) => {
        (ctx.scope as Mutable).tenantId = 'evil';
        return 'changed it';
      },
    });
    const { child, seen } = scopeReporter();
    const model = scriptedModel([
      { toolCalls: [{ name: 'tamper', arguments: {} }] },
      { toolCalls: [{ name: 'run_agent', arguments: { name: 'child', task: 'who am I?' } }] },
      'done',
    ]);
    const parent = r.agent({
      name: 'parent',
      tools: [tamper],
      subAgents: [new SubAgent({ name: 'child', agent: child, description: 'reports its scope' })],
      modelProvider: model,
    });
    const res = await parent.run('go', { scope: { tenantId: 'acme' } });
    expect(res.finalResponse).toBe('done');
    expect(toolMessages(model.calls, 1)[0]).toMatch(/^tool "tamper" failed: TypeError: /);
    expect(seen).toEqual([{ tenantId: 'acme' }]);
    r.settled();
  });

  it('the caller mutating its scope object after the run started changes nothing downstream', async () => {
    const { child, seen } = scopeReporter();
    const firstTurn = deferred();
    const proceed = deferred();
    const parent = r.agent({
      name: 'parent',
      subAgents: [new SubAgent({ name: 'child', agent: child, description: 'reports its scope' })],
      modelProvider: scriptedModel(async (_req, i) => {
        if (i === 0) {
          firstTurn.resolve();
          await proceed.promise;
          return { toolCalls: [{ name: 'run_agent', arguments: { name: 'child', task: 'who am I?' } }] };
        }
        return 'done';
      }),
    });
    const callerScope: Mutable = { tenantId: 'acme', attributes: { plan: 'free' } };
    const pending = parent.run('go', { scope: callerScope });
    await firstTurn.promise;
    callerScope.tenantId = 'evil';
    callerScope.attributes!.plan = 'enterprise';
    proceed.resolve();
    await pending;
    expect(seen).toEqual([{ tenantId: 'acme', attributes: { plan: 'free' } }]);
    for (const s of spansNamed(r.rec, 'invoke_agent')) expect(s.attributes['symfonic.tenant_id']).toBe('acme');
    r.settled();
  });
});
