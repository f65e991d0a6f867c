import { describe, expect, it } from 'vitest';
import { ConfigurationError, InMemorySessionStore, SubAgent, SubAgentSpec, SymfonicAgent, type Message } from '../../src/index.js';
import { scriptedModel, type ScriptedModel } from '../../src/testing/index.js';

const scope = { tenantId: 'acme', sessionId: 'chat-3' };

/** A model that delegates each user message to `child` once (with the message as the task), then answers with the child's reply. */
function delegating(child: string): ScriptedModel {
  return scriptedModel((request) => {
    const last = request.messages.at(-1)!;
    if (last.role === 'user') return { toolCalls: [{ name: 'run_agent', arguments: { name: child, task: `${child} task: ${last.content}` } }] };
    return `relayed: ${last.content}`;
  });
}

/** A leaf model that answers each task, recording what it saw. */
function leaf(seen: (readonly Message[])[]): ScriptedModel {
  return scriptedModel((request) => {
    seen.push(request.messages);
    return `answer to ${request.messages.at(-1)!.content}`;
  });
}

describe("a child's memory of the session", () => {
  it("by default sees only its task, never the parent's conversation nor its own earlier exchanges", async () => {
    const seen: (readonly Message[])[] = [];
    const billing = new SymfonicAgent({ name: 'billing', modelProvider: leaf(seen) });
    const router = new SymfonicAgent({ name: 'router', modelProvider: delegating('billing'), sessions: new InMemorySessionStore(), subAgents: [new SubAgent({ name: 'billing', agent: billing, description: 'billing' })] });
    await router.run('first question', { scope });
    await router.run('second question', { scope });
    expect(seen[1]).toEqual([{ role: 'user', content: 'billing task: second question' }]);
    expect(await router.session('acme', 'chat-3').messages('router/billing')).toEqual([]);
  });

  it("with memory 'session' also sees its own earlier exchanges, in namespace <parent>/<child>", async () => {
    const seen: (readonly Message[])[] = [];
    const sessions = new InMemorySessionStore();
    const router = new SymfonicAgent({
      name: 'router',
      modelProvider: delegating('billing'),
      sessions,
      subAgents: [new SubAgentSpec({ name: 'billing', description: 'billing', modelProvider: leaf(seen), memory: 'session' })],
    });
    await router.run('first question', { scope });
    await router.run('second question', { scope });
    expect(seen[1]!.map((m) => m.content)).toEqual(['billing task: first question', 'answer to billing task: first question', 'billing task: second question']);
    // Never the parent's conversation: the root's user messages are not among what it saw.
    expect(seen[1]!.some((m) => m.content === 'first question')).toBe(false);
    expect((await router.session('acme', 'chat-3').messages('router/billing')).map((m) => m.content)).toHaveLength(4);
    // turns() lists the root's turns only; a child's exchanges are in its namespace.
    expect((await router.session('acme', 'chat-3').turns()).map((t) => t.agent)).toEqual(['router', 'router']);
  });

  it("keeps a grandchild's namespace below its parent's, and never lets one child read another's", async () => {
    const seenLeaf: (readonly Message[])[] = [];
    const seenOther: (readonly Message[])[] = [];
    const sessions = new InMemorySessionStore();
    const researcher = new SymfonicAgent({
      name: 'researcher',
      modelProvider: delegating('fetcher'),
      subAgents: [new SubAgentSpec({ name: 'fetcher', description: 'fetches', modelProvider: leaf(seenLeaf), memory: 'session' })],
    });
    const other = new SymfonicAgent({ name: 'other', modelProvider: leaf(seenOther) });
    const model = scriptedModel((request) => {
      const last = request.messages.at(-1)!;
      if (last.role === 'user') return { toolCalls: [{ id: 'a', name: 'run_agent', arguments: { name: 'researcher', task: last.content } }, { id: 'b', name: 'run_agent', arguments: { name: 'other', task: last.content } }] };
      return 'done';
    });
    const root = new SymfonicAgent({
      name: 'root',
      modelProvider: model,
      sessions,
      subAgents: [new SubAgent({ name: 'researcher', agent: researcher, description: 'researches' }), new SubAgent({ name: 'other', agent: other, description: 'other', memory: 'session' })],
    });
    await root.run('q1', { scope });
    await root.run('q2', { scope });
    const view = root.session('acme', 'chat-3');
    expect((await view.messages('root/researcher/fetcher')).map((m) => m.content)).toEqual(['fetcher task: q1', 'answer to fetcher task: q1', 'fetcher task: q2', 'answer to fetcher task: q2']);
    expect(await view.messages('root/researcher')).toEqual([]);
    expect(seenLeaf[1]!.map((m) => m.content)).toEqual(['fetcher task: q1', 'answer to fetcher task: q1', 'fetcher task: q2']);
    expect(seenOther[1]!.map((m) => m.content)).toEqual(['q1', 'answer to q1', 'q2']);
  });

  it("refuses a memory that is neither 'none' nor 'session'", () => {
    expect(() => new SubAgentSpec({ name: 'b', description: 'b', memory: 'all' as never })).toThrow(ConfigurationError);
    expect(() => new SubAgentSpec({ name: 'b', description: 'b', memory: 'all' as never })).toThrow(/memory must be 'none'/);
  });
});
