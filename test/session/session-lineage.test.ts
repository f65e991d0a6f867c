import { describe, expect, it } from 'vitest';
import { InMemorySessionStore, SPAN_ATTRIBUTES, SubAgentSpec, SymfonicAgent, type RunEvent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { collectingLogger } from '../support/logging.js';
import { recordEachTest } from '../support/per-test.js';

const rec = recordEachTest();
const scope = { tenantId: 'acme', sessionId: 'chat-7' };

function router(logger?: ReturnType<typeof collectingLogger>["logger"]) {
  const model = scriptedModel((request) => {
    const last = request.messages.at(-1)!;
    if (last.role === 'user' && request.messages.length >= 1 && !last.content.startsWith('billing:')) return { toolCalls: [{ name: 'run_agent', arguments: { name: 'billing', task: 'billing: check invoice' } }] };
    if (last.content.startsWith('billing:')) return 'invoice paid';
    return 'done';
  });
  return new SymfonicAgent({
    name: 'router',
    modelProvider: model,
    sessions: new InMemorySessionStore(),
    subAgents: [new SubAgentSpec({ name: 'billing', description: 'billing questions' })],
    ...(logger !== undefined ? { logger } : {}),
  });
}

describe('the lineage of a session turn', () => {
  it('puts gen_ai.conversation.id and symfonic.session_id on every span of the turn, children included', async () => {
    await router().run('Was my invoice paid?', { scope });
    const spans = rec.spans();
    expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining(['invoke_agent router', 'invoke_agent billing', 'execute_tool run_agent']));
    for (const span of spans) {
      expect(span.attributes[SPAN_ATTRIBUTES.conversationId], span.name).toBe('chat-7');
      expect(span.attributes[SPAN_ATTRIBUTES.sessionId], span.name).toBe('chat-7');
    }
    expect(SPAN_ATTRIBUTES.conversationId).toBe('gen_ai.conversation.id');
    expect(SPAN_ATTRIBUTES.sessionId).toBe('symfonic.session_id');
  });

  it('puts sessionId on every run event and every log line of the tree', async () => {
    const { logger, lines } = collectingLogger('debug');
    const events: RunEvent[] = [];
    await router(logger).run('Was my invoice paid?', { scope, onEvent: (e) => events.push(e) });
    expect(new Set(events.map((e) => e.agent))).toEqual(new Set(['router', 'billing']));
    for (const e of events) expect(e.sessionId, e.type).toBe('chat-7');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line['session_id'], String(line['msg'])).toBe('chat-7');
  });

  it('says sessionId null on the events of a run outside a session', async () => {
    const events: RunEvent[] = [];
    await router().run('Was my invoice paid?', { scope: { tenantId: 'acme' }, onEvent: (e) => events.push(e) });
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) expect(e.sessionId).toBeNull();
    for (const span of rec.spans()) expect(span.attributes[SPAN_ATTRIBUTES.sessionId]).toBeUndefined();
  });
});
