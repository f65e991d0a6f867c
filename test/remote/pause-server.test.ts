/**
 * A served tree that suspends, driven by a client we did not write: plain fetch speaking A2A 1.0
 * JSON-RPC. The task answers TASK_STATE_INPUT_REQUIRED with its interruptions as a data part;
 * a message to the same task carrying decisions resumes the tree there, to COMPLETED, blocking
 * or streamed. Bad decisions, and messages to tasks not waiting for input, get A2A's errors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FrameworkConfig, SymfonicAgent, defineTool } from '../../src/index.js';
import { InMemoryTaskStore, serveAgent, type ServedAgent } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { toolResults } from '../interruptions/helpers.js';
import { bearer, collector, ext, post } from './helpers.js';

let served: ServedAgent | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

const USAGE = { inputTokens: 30, outputTokens: 3 };

/** A treasurer whose `wire` tool needs approval; it answers with what the tool said. */
async function serveTreasurer(): Promise<{ url: string; ran: number[] }> {
  const ran: number[] = [];
  const wire = defineTool({ name: 'wire', description: 'Wires money.', input: z.object({ amount: z.number() }), needsApproval: true, execute: ({ amount }) => (ran.push(amount), `wired ${amount}`) });
  const model = scriptedModel((req) => (toolResults(req).length === 0 ? { toolCalls: [{ name: 'wire', arguments: { amount: 42 } }], usage: USAGE } : { text: `treasurer: ${toolResults(req)[0]}`, usage: USAGE }));
  const agent = new SymfonicAgent({ name: 'treasurer', modelProvider: model, tools: [wire], metricsCollector: collector() });
  served = await serveAgent(agent, { authenticate: bearer() });
  return { url: served.url, ran };
}

let nextId = 1;
function send(message: Record<string, unknown>, method = 'SendMessage'): string {
  return JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { message: { messageId: `m-${nextId}`, role: 'ROLE_USER', ...message } } });
}

/** A plain client: no symfonic extension activated. */
const plain = { 'a2a-extensions': '' };

async function paused(url: string, headers: Record<string, string> = {}): Promise<any> {
  const r = await post(url, send({ parts: [{ text: 'pay the supplier' }] }), headers);
  expect(r.status).toBe(200);
  return r.json.result.task;
}

describe('a served tree that suspends, to a plain A2A client', () => {
  it('answers INPUT_REQUIRED with its interruptions as plain JSON, and nothing runs', async () => {
    const { url, ran } = await serveTreasurer();
    const task = await paused(url, plain);
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const [text, data] = task.status.message.parts;
    expect(text.text).toMatch(/agent "treasurer" waits for approval of tool "wire"/);
    expect(text.text).toMatch(/"decisions"/);
    expect(data.data.interruptions).toEqual([{ id: expect.stringMatching(/^[0-9a-f]{32}:1:0$/), kind: 'approval', agent: 'treasurer', tool: 'wire', input: { amount: 42 } }]);
    // No extension activated: no symfonic metadata.
    expect(task.metadata).toBeUndefined();
    expect(ran).toEqual([]);
  });

  it('decisions sent to the same task resume the tree there: approved, the tool runs once and the task completes', async () => {
    const { url, ran } = await serveTreasurer();
    const task = await paused(url, plain);
    const id = task.status.message.parts[1].data.interruptions[0].id;
    const r = await post(url, send({ taskId: task.id, contextId: task.contextId, parts: [{ data: { decisions: { [id]: { approve: true } } } }] }), plain);
    const done = r.json.result.task;
    expect(done.id).toBe(task.id);
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(done.artifacts[0].parts[0].text).toBe('treasurer: wired 42');
    expect(ran).toEqual([42]);
    // The task's history holds both messages.
    expect(done.history).toHaveLength(2);
    // The same task, GetTask: completed.
    const got = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'GetTask', params: { id: task.id } }), plain);
    expect(got.json.result.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('declined with a reason: the model reads it and the tool never runs', async () => {
    const { url, ran } = await serveTreasurer();
    const task = await paused(url, plain);
    const id = task.status.message.parts[1].data.interruptions[0].id;
    const r = await post(url, send({ taskId: task.id, parts: [{ data: { decisions: { [id]: { approve: false, reason: 'not this month' } } } }] }), plain);
    const done = r.json.result.task;
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(done.artifacts[0].parts[0].text).toMatch(/declined.*not this month/);
    expect(ran).toEqual([]);
  });

  it('with the extension active, the pause carries the spend so far and the interruptions with their lineage; the end carries the whole spend', async () => {
    const { url } = await serveTreasurer();
    const task = await paused(url);
    const meta = ext(task.metadata);
    expect(meta.usage.totalUsage).toMatchObject({ inputTokens: 30, outputTokens: 3 });
    expect(meta.interruptions[0]).toMatchObject({ kind: 'approval', agent: 'treasurer', tool: 'wire', depth: 0, parentRunId: null });
    expect(meta.interruptions[0].id.startsWith(`${meta.interruptions[0].runId}:`)).toBe(true);
    const id = meta.interruptions[0].id;
    const r = await post(url, send({ taskId: task.id, parts: [{ data: { decisions: { [id]: { approve: true } } } }] }));
    expect(ext(r.json.result.task.metadata).usage.totalUsage).toMatchObject({ inputTokens: 60, outputTokens: 6 });
    expect(ext(r.json.result.task.metadata).usage.runId).toBe(meta.usage.runId);
  });

  it('streamed: SendStreamingMessage with the decisions streams the resumed stretch to COMPLETED', async () => {
    const { url } = await serveTreasurer();
    const task = await paused(url, plain);
    const id = task.status.message.parts[1].data.interruptions[0].id;
    const r = await post(url, send({ taskId: task.id, parts: [{ data: { decisions: { [id]: { approve: true } } } }] }, 'SendStreamingMessage'), { ...plain, accept: 'text/event-stream' });
    const events = r.text
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => JSON.parse(l.slice(5)).result);
    expect(events[0].task.id).toBe(task.id);
    expect(events.at(-2).artifactUpdate.artifact.parts[0].text).toBe('treasurer: wired 42');
    expect(events.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('a streamed first message ends its stream at the pause, INPUT_REQUIRED with the interruptions', async () => {
    const { url } = await serveTreasurer();
    const r = await post(url, send({ parts: [{ text: 'pay' }] }, 'SendStreamingMessage'), plain);
    const last = JSON.parse(r.text.trim().split('\n').filter((l) => l.startsWith('data:')).at(-1)!.slice(5)).result;
    expect(last.statusUpdate.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(last.statusUpdate.status.message.parts[1].data.interruptions[0]).toMatchObject({ kind: 'approval', tool: 'wire' });
  });

  it('a plain text reply answers a single pending ask_user question', async () => {
    const model = scriptedModel((req) => (toolResults(req).length === 0 ? { toolCalls: [{ name: 'ask_user', arguments: { question: 'Which city?' } }] } : `flying from ${toolResults(req)[0]}`));
    const agent = new SymfonicAgent({ name: 'travel', modelProvider: model, config: new FrameworkConfig({ agent: { askUserEnabled: true } }) });
    served = await serveAgent(agent, { authenticate: bearer() });
    const task = await paused(served.url, plain);
    expect(task.status.message.parts[1].data.interruptions[0]).toMatchObject({ kind: 'question', question: 'Which city?', tool: 'ask_user' });
    expect(task.status.message.parts[0].text).toMatch(/or the answer as text/);
    const r = await post(served.url, send({ taskId: task.id, parts: [{ text: 'Oslo' }] }), plain);
    expect(r.json.result.task.artifacts[0].parts[0].text).toBe('flying from Oslo');
  });

  it('cancelled while it waits: CANCELED, and the task takes no decisions after', async () => {
    const { url, ran } = await serveTreasurer();
    const task = await paused(url, plain);
    const id = task.status.message.parts[1].data.interruptions[0].id;
    const c = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'CancelTask', params: { id: task.id } }), plain);
    expect(c.json.result.status.state).toBe('TASK_STATE_CANCELED');
    const r = await post(url, send({ taskId: task.id, parts: [{ data: { decisions: { [id]: { approve: true } } } }] }), plain);
    expect(r.json.error.code).toBe(-32004);
    expect(ran).toEqual([]);
  });
});

describe('paused tasks are bounded per principal', () => {
  it('at maxPausedPerPrincipal paused tasks a new message is refused naming the bound; the paused ones still resume', async () => {
    const wire = defineTool({ name: 'wire', description: 'Wires money.', input: z.object({}), needsApproval: true, execute: () => 'wired' });
    const model = scriptedModel((req) => (toolResults(req).length === 0 ? { toolCalls: [{ name: 'wire', arguments: {} }] } : 'done'));
    served = await serveAgent(new SymfonicAgent({ name: 'treasurer', modelProvider: model, tools: [wire] }), { authenticate: bearer(), tasks: new InMemoryTaskStore({ maxPausedPerPrincipal: 1 }) });
    const first = await paused(served.url, plain);
    const refused = await post(served.url, send({ parts: [{ text: 'pay another' }] }), plain);
    expect(refused.json.error.code).toBe(-32004);
    expect(refused.json.error.message).toMatch(/maxPausedPerPrincipal \(1\)/);
    const decide = (t: any) => send({ taskId: t.id, parts: [{ data: { decisions: { [t.status.message.parts[1].data.interruptions[0].id]: { approve: true } } } }] });
    const kept = await post(served.url, decide(first), plain);
    expect(kept.json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect((await paused(served.url, plain)).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });
});

describe('messages a paused task refuses, with the A2A error naming the problem', () => {
  it('decisions that miss an interruption or name an unknown one: -32602, and the task still waits', async () => {
    const { url, ran } = await serveTreasurer();
    const task = await paused(url, plain);
    const id = task.status.message.parts[1].data.interruptions[0].id;
    const unknown = await post(url, send({ taskId: task.id, parts: [{ data: { decisions: { nope: { approve: true } } } }] }), plain);
    expect(unknown.json.error.code).toBe(-32602);
    expect(unknown.json.error.message).toContain(`no decision for "${id}"`);
    expect(unknown.json.error.message).toContain('"nope"');
    const wrongKind = await post(url, send({ taskId: task.id, parts: [{ data: { decisions: { [id]: { answer: 'yes' } } } }] }), plain);
    expect(wrongKind.json.error.code).toBe(-32602);
    expect(wrongKind.json.error.message).toMatch(/must be \{ approve: true \}/);
    const notObject = await post(url, send({ taskId: task.id, parts: [{ data: { decisions: 'yes' } }] }), plain);
    expect(notObject.json.error.message).toMatch(/"decisions" must be an object/);
    const text = await post(url, send({ taskId: task.id, parts: [{ text: 'yes please' }] }), plain);
    expect(text.json.error.code).toBe(-32602);
    expect(text.json.error.message).toMatch(/a text reply answers only a single pending question/);
    const otherContext = await post(url, send({ taskId: task.id, contextId: 'elsewhere', parts: [{ data: { decisions: { [id]: { approve: true } } } }] }), plain);
    expect(otherContext.json.error.code).toBe(-32602);
    expect(otherContext.json.error.message).toMatch(/is not task .*'s context/);
    const got = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'GetTask', params: { id: task.id } }), plain);
    expect(got.json.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(ran).toEqual([]);
  });

  it('two messages bringing the decisions at once: one resumes the task, the other is refused, and the tool runs once', async () => {
    const { url, ran } = await serveTreasurer();
    const task = await paused(url, plain);
    const decide = () => post(url, send({ taskId: task.id, parts: [{ data: { decisions: { [task.status.message.parts[1].data.interruptions[0].id]: { approve: true } } } }] }), plain);
    const answers = await Promise.all([decide(), decide()]);
    expect(answers.map((a) => a.json.result?.task.status.state ?? a.json.error.code).sort()).toEqual([-32004, 'TASK_STATE_COMPLETED']);
    expect(ran).toEqual([42]);
  });

  it('a task that has completed: -32004; an unknown task: -32001', async () => {
    const { url } = await serveTreasurer();
    const task = await paused(url, plain);
    const id = task.status.message.parts[1].data.interruptions[0].id;
    const decide = send({ taskId: task.id, parts: [{ data: { decisions: { [id]: { approve: true } } } }] });
    await post(url, decide, plain);
    const again = await post(url, send({ taskId: task.id, parts: [{ data: { decisions: { [id]: { approve: true } } } }] }), plain);
    expect(again.json.error.code).toBe(-32004);
    expect(again.json.error.message).toMatch(/has ended/);
    const missing = await post(url, send({ taskId: 'no-such-task', parts: [{ text: 'x' }] }), plain);
    expect(missing.json.error.code).toBe(-32001);
  });
});
