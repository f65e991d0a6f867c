// One replica of a served treasurer fleet behind one URL, in its own process, from the built
// package as an app server would run it. Its options arrive in the first IPC message:
// { name, publicUrl, store: RedisTaskStoreOptions }. It reports { type: 'ready', url } and runs
// until it is killed. Messages: "pay N" pauses for approval of wire(N), whose result names this
// replica ("wired N on <name>"); "slow N" answers after N ms; "chunks" streams three chunks;
// anything else is answered "<name> says: <text>". Principals come by bearer token: acme, evil.
import { z } from 'zod';
import { SymfonicAgent, defineTool } from '../../../dist/index.js';
import { RedisTaskStore, serveAgent } from '../../../dist/remote/index.js';
import { scriptedModel } from '../../../dist/testing/index.js';

const { name, publicUrl, store } = await new Promise((resolve) => process.once('message', resolve));
const byToken = (req) => {
  const m = /^Bearer (evil|acme)$/.exec(String(req.headers.authorization));
  return m ? { principal: m[1], tenants: [m[1]] } : null;
};
const wire = defineTool({ name: 'wire', description: 'Wires money.', input: z.object({ amount: z.number() }), needsApproval: true, execute: ({ amount }) => `wired ${amount} on ${name}` });
const model = scriptedModel((req) => {
  const done = req.messages.filter((m) => m.role === 'tool').map((m) => m.content);
  if (done.length > 0) return `paid: ${done[0]}`;
  const text = String(req.messages.find((m) => m.role === 'user')?.content ?? '');
  const slow = /^slow (\d+)/.exec(text);
  if (slow) return { text: `${name} was slow`, delayMs: Number(slow[1]) };
  if (text.startsWith('chunks')) return { chunks: ['one ', 'two ', 'three'], delayMs: 300, chunkDelayMs: 300 };
  if (text.startsWith('pay')) return { toolCalls: [{ name: 'wire', arguments: { amount: Number(/\d+/.exec(text)?.[0] ?? 1) } }] };
  return `${name} says: ${text}`;
});
const tasks = new RedisTaskStore(store);
const server = await serveAgent(new SymfonicAgent({ name: 'treasurer', modelProvider: model, tools: [wire] }), { authenticate: byToken, tasks, publicUrl });
process.send({ type: 'ready', url: server.url });
