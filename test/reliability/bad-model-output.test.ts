/**
 * A model is an untrusted source of tool calls. Whatever it emits (broken JSON, the wrong shape,
 * names that do not exist, no answer at all, a hundred delegations at once) the run either goes on
 * with a tool message the model can act on, or fails with a clear error; and either way it leaves
 * nothing open behind it.
 */
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { EmptyModelResponseError, FrameworkConfig, SubAgent, defineTool, type ModelRequest, type SymfonicAgent } from '../../src/index.js';
import { scriptedModel, type ScriptedModel, type ScriptedTurn } from '../../src/testing/index.js';
import { deferred, until, type Deferred } from '../support/async.js';
import { rigEachTest, spansNamed, toolMessages } from './rig.js';

const r = rigEachTest();

const scope = { tenantId: 'acme' };
const u = { inputTokens: 3, outputTokens: 2 };

/** A parent that delegates to one SymfonicAgent child, "worker", which answers `worker got: <task>`. */
function family(parentTurns: ScriptedTurn[], childModel?: ScriptedModel, tools = [] as ReturnType<typeof defineTool>[]) {
  const workerModel = childModel ?? scriptedModel((req) => ({ text: `worker got: ${req.messages[0]!.content.slice(0, 40)}`, usage: u }));
  const worker = r.agent({ name: 'worker', modelProvider: workerModel });
  const parentModel = scriptedModel(parentTurns);
  const parent = r.agent({
    name: 'boss',
    modelProvider: parentModel,
    tools,
    subAgents: [new SubAgent({ name: 'worker', agent: worker, description: 'does the work' })],
  });
  return { parent, parentModel, workerModel };
}

function toolSpan(name: string) {
  const spans = spansNamed(r.rec, `execute_tool ${name}`);
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

const echo = defineTool({
  name: 'echo',
  description: 'Echoes a number.',
  input: z.object({ n: z.number() }),
  execute: ({ n }) => `echo ${n}`,
});

describe('malformed and mistaken tool calls become tool messages; the turn goes on', () => {
  it('run_agent with arguments that are not JSON', async () => {
    const { parent, parentModel, workerModel } = family([
      { toolCalls: [{ name: 'run_agent', arguments: '{"name": "worker", "task": ' }], usage: u },
      { text: 'recovered', usage: u },
    ]);
    const res = await parent.run('go', { scope });
    expect(res.finalResponse).toBe('recovered');
    expect(res.delegatedTo).toEqual([]);
    expect(toolMessages(parentModel.calls, 1)[0]).toMatch(/arguments for tool "run_agent" are not valid JSON/);
    expect(workerModel.calls).toHaveLength(0);
    const span = toolSpan('run_agent');
    expect(span.attributes['symfonic.delegation.outcome']).toBe('invalid_request');
    expect(span.status.code).toBe(2);
    r.settled();
  });

  it('an ordinary tool with arguments that are not JSON', async () => {
    const { parent, parentModel } = family([{ toolCalls: [{ name: 'echo', arguments: '{n: 1' }] }, 'ok'], undefined, [echo]);
    await expect(parent.run('go', { scope })).resolves.toMatchObject({ finalResponse: 'ok' });
    expect(toolMessages(parentModel.calls, 1)[0]).toMatch(/arguments for tool "echo" are not valid JSON/);
    expect(toolSpan('echo').attributes['error.type']).toBe('invalid_arguments');
    r.settled();
  });

  it('arguments that parse but fail the schema', async () => {
    const { parent, parentModel, workerModel } = family(
      [
        {
          toolCalls: [
            { name: 'run_agent', arguments: { name: 42, task: 'x' } },
            { name: 'echo', arguments: { n: 'seven' } },
          ],
        },
        'ok',
      ],
      undefined,
      [echo],
    );
    const res = await parent.run('go', { scope });
    expect(res.finalResponse).toBe('ok');
    const [runAgentMsg, echoMsg] = toolMessages(parentModel.calls, 1);
    expect(runAgentMsg).toMatch(/arguments for tool "run_agent" do not match its parameters/);
    expect(runAgentMsg).toMatch(/name/);
    expect(echoMsg).toMatch(/arguments for tool "echo" do not match its parameters/);
    expect(workerModel.calls).toHaveLength(0);
    expect(toolSpan('run_agent').attributes['symfonic.delegation.outcome']).toBe('invalid_request');
    expect(toolSpan('echo').attributes['error.type']).toBe('invalid_arguments');
    r.settled();
  });

  it('a tool that does not exist', async () => {
    const { parent, parentModel } = family([{ toolCalls: [{ name: 'delete_everything', arguments: {} }] }, 'ok']);
    await expect(parent.run('go', { scope })).resolves.toMatchObject({ finalResponse: 'ok' });
    const msg = toolMessages(parentModel.calls, 1)[0]!;
    expect(msg).toContain('there is no tool named "delete_everything"');
    expect(msg).toContain('"run_agent"');
    const span = toolSpan('delete_everything');
    expect(span.attributes['error.type']).toBe('unknown_tool');
    expect(span.status.code).toBe(2);
    r.settled();
  });

  it('a child that does not exist', async () => {
    const { parent, parentModel, workerModel } = family([{ toolCalls: [{ name: 'run_agent', arguments: { name: 'ghost', task: 'boo' } }] }, 'ok']);
    const res = await parent.run('go', { scope });
    expect(res.delegatedTo).toEqual([]);
    const msg = toolMessages(parentModel.calls, 1)[0]!;
    expect(msg).toContain('no sub-agent is named "ghost"');
    expect(msg).toContain('"worker"');
    expect(workerModel.calls).toHaveLength(0);
    const span = toolSpan('run_agent');
    expect(span.attributes['symfonic.delegation.outcome']).toBe('unknown_child');
    expect(span.attributes['symfonic.delegation.child']).toBe('ghost');
    r.settled();
  });
});

describe('tasks of every shape', () => {
  it('a task that is an object or a number is JSON-encoded and delegated, not dropped', async () => {
    const seen: string[] = [];
    const workerModel = scriptedModel((req) => {
      seen.push(req.messages[0]!.content);
      return { text: 'fine', usage: u };
    });
    const task = { question: 'why?', items: [1, 2, { deep: true }] };
    const { parent } = family(
      [
        {
          toolCalls: [
            { name: 'run_agent', arguments: { name: 'worker', task } },
            { name: 'run_agent', arguments: { name: 'worker', task: 42 } },
          ],
        },
        'ok',
      ],
      workerModel,
    );
    const res = await parent.run('go', { scope });
    expect(res.delegatedTo).toEqual(['worker', 'worker']);
    expect(seen.sort()).toEqual(['42', JSON.stringify(task)].sort());
    for (const s of spansNamed(r.rec, 'execute_tool run_agent')) expect(s.attributes['symfonic.delegation.outcome']).toBe('delegated');
    r.settled();
  });

  it('an empty or blank task is refused with a message, and the child never runs', async () => {
    const { parent, parentModel, workerModel } = family([
      {
        toolCalls: [
          { name: 'run_agent', arguments: { name: 'worker', task: '' } },
          { name: 'run_agent', arguments: { name: 'worker', task: '  \n\t ' } },
          { name: 'run_agent', arguments: { name: 'worker' } },
        ],
      },
      'ok',
    ]);
    const res = await parent.run('go', { scope });
    expect(res.delegatedTo).toEqual([]);
    expect(workerModel.calls).toHaveLength(0);
    for (const msg of toolMessages(parentModel.calls, 1)) expect(msg).toMatch(/the task for "worker" is empty/);
    const spans = spansNamed(r.rec, 'execute_tool run_agent');
    expect(spans.map((s) => s.attributes['symfonic.delegation.outcome'])).toEqual(['invalid_request', 'invalid_request', 'invalid_request']);
    r.settled();
  });

  it('a 1 MiB task reaches the child whole', async () => {
    const mib = 1024 * 1024;
    const body = Array.from({ length: mib / 16 }, (_, i) => i.toString(16).padStart(15, '0') + '\n').join('');
    expect(body.length).toBe(mib);
    let received = '';
    const workerModel = scriptedModel((req) => {
      received = req.messages[0]!.content;
      return { text: `got ${received.length}`, usage: u };
    });
    const { parent, parentModel } = family([{ toolCalls: [{ name: 'run_agent', arguments: { name: 'worker', task: body } }] }, 'ok'], workerModel);
    const res = await parent.run('go', { scope });
    expect(res.delegatedTo).toEqual(['worker']);
    expect(received.length).toBe(mib);
    expect(received === body).toBe(true);
    expect(toolMessages(parentModel.calls, 1)).toEqual([`got ${mib}`]);
    r.settled();
  });
});

describe('a model that answers with nothing', () => {
  it('fails a root run with EmptyModelResponseError', async () => {
    const agent = r.agent({ name: 'mute', modelProvider: scriptedModel([{ usage: u }]) });
    const error = await agent.run('say something', { scope }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmptyModelResponseError);
    expect((error as Error).message).toMatch(/neither text nor a tool call/);
    const [span] = spansNamed(r.rec, 'invoke_agent mute');
    expect(span!.attributes['error.type']).toBe('EmptyModelResponseError');
    r.settled();
  });

  it('inside a child becomes a child_error tool message; the parent answers', async () => {
    const { parent, parentModel } = family([{ toolCalls: [{ name: 'run_agent', arguments: { name: 'worker', task: 'do it' } }] }, 'answered anyway'], scriptedModel([{}]));
    const res = await parent.run('go', { scope });
    expect(res.finalResponse).toBe('answered anyway');
    expect(res.delegatedTo).toEqual(['worker']);
    expect(toolMessages(parentModel.calls, 1)[0]).toMatch(/^Sub-agent "worker" failed: EmptyModelResponseError: /);
    const span = toolSpan('run_agent');
    expect(span.attributes['symfonic.delegation.outcome']).toBe('child_error');
    expect(span.attributes['error.type']).toBe('EmptyModelResponseError');
    r.settled();
  });
});

describe('a hundred run_agent calls in one turn', () => {
  /**
   * Children that hold until the test lets them go, counting how many are in flight. Released
   * newest first, so results finishing out of order still have to come back in call order.
   */
  async function hundred(config: FrameworkConfig | undefined, expectedLimit: number) {
    const n = 100;
    let active = 0;
    let maxActive = 0;
    const held: Deferred[] = [];
    const workerModel = scriptedModel(async (req: ModelRequest) => {
      active++;
      maxActive = Math.max(maxActive, active);
      const gate = deferred();
      held.push(gate);
      await gate.promise;
      active--;
      return { text: `answer to ${req.messages[0]!.content}`, usage: u };
    });
    const worker = r.agent({ name: 'worker', modelProvider: workerModel });
    const calls = Array.from({ length: n }, (_, i) => ({ name: 'run_agent', arguments: { name: 'worker', task: `t${i}` }, id: `call-${i}` }));
    const parentModel = scriptedModel([{ toolCalls: calls, usage: u }, 'all done']);
    const parent: SymfonicAgent = r.agent({
      name: 'boss',
      modelProvider: parentModel,
      subAgents: [new SubAgent({ name: 'worker', agent: worker, description: 'does the work' })],
      ...(config ? { config } : {}),
    });
    // A hundred waiters on one signal are by design, not a leak: Node must not be told otherwise.
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    const pending = parent.run('fan out', { scope });
    for (let released = 0; released < n; released++) {
      const expected = Math.min(expectedLimit, n - released);
      await until(() => active === expected, `${expected} children in flight`);
      // One more round for a limiter that over-admits to show itself.
      await new Promise<void>((res) => setImmediate(res));
      expect(active).toBe(expected);
      held.pop()!.resolve();
    }
    const res = await pending;
    await new Promise<void>((res2) => setImmediate(res2));
    process.off('warning', onWarning);
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
    expect(maxActive).toBe(expectedLimit);
    expect(res.delegatedTo).toHaveLength(n);
    const results = parentModel.calls[1]!.messages.filter((m) => m.role === 'tool');
    expect(results.map((m) => m.toolCallId)).toEqual(calls.map((c) => c.id));
    expect(results.map((m) => m.content)).toEqual(calls.map((c) => `answer to ${c.arguments.task}`));
    expect(spansNamed(r.rec, 'invoke_agent worker')).toHaveLength(n);
    r.settled();
  }

  it('run at most agent.maxConcurrentDelegations at once, and come back in call order', async () => {
    await hundred(new FrameworkConfig({ agent: { maxConcurrentDelegations: 4 } }), 4);
  });

  it('run at most 8 at once by default', async () => {
    await hundred(undefined, 8);
  });
});
