/**
 * The check every reliability scenario ends with must itself be able to fail: each kind of leak
 * is made here by hand, and `settled()` has to name it.
 */
import { testFrame } from '../support/frames.js';
import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../src/testing/index.js';
import { SubAgent } from '../../src/index.js';
import { delegationOf, rigEachTest } from './rig.js';

const r = rigEachTest();

function failureOf(fn: () => void): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('settled() passed with a leak in place');
}

describe('settled()', () => {
  it('passes after a clean delegated run, and checked something', async () => {
    const child = r.agent({ name: 'child', modelProvider: scriptedModel([{ text: 'hi', usage: { inputTokens: 1, outputTokens: 1 } }]) });
    const parent = r.agent({
      name: 'parent',
      modelProvider: scriptedModel([{ toolCalls: [{ name: 'run_agent', arguments: { name: 'child', task: 't' } }] }, 'done']),
      subAgents: [new SubAgent({ name: 'child', agent: child, description: 'a child' })],
    });
    await parent.run('go', { scope: { tenantId: 'acme' } });
    expect(r.store.reservations).toBe(3);
    expect(r.collector.started).toBe(2);
    expect(r.spans.started).toBeGreaterThanOrEqual(6);
    r.settled();
  });

  it('names a span that never ended', () => {
    trace.getTracer('leak').startSpan('forgotten');
    expect(failureOf(() => r.settled())).toContain('forgotten');
  });

  it('names a ledger entry left open', () => {
    r.collector.open(testFrame({ runId: 'left-open', tenantId: 'acme' }), 'x');
    expect(failureOf(() => r.settled())).toContain('collector.openRuns is 1');
  });

  it('names a reservation never settled', () => {
    r.store.reserve('acme', { tokens: 10, costUsd: 0 }, { maxTokens: 100 }, Date.now());
    expect(failureOf(() => r.settled())).toContain('tenant acme still holds a reservation of 10 tokens');
  });

  it('names delegation state never closed', async () => {
    const parent = r.agent({
      name: 'parent',
      modelProvider: scriptedModel(['x']),
      subAgents: [new SubAgent({ name: 'child', agent: { run: async () => ({ finalResponse: '' }) }, description: 'a child' })],
    });
    delegationOf(parent)!.context.recordStart('some-run', 'child');
    expect(failureOf(() => r.settled())).toContain('agent parent holds delegation state for 1 run(s)');
  });
});
