// The A2A TCK's system under test as a fleet: the agent of ../shared/tck/serve-tck.mjs (scripted
// model answering "TCK-ANSWER: <task>", a task containing "slow" taking SLOW_MS, default 3000 ms;
// Bearer $TCK_TOKEN, default "tck-token", is principal 'tck') served by two replicas, each its own
// serveAgent and RedisTaskStore on one Redis, behind the round-robin proxy of the stack tests, so
// consecutive calls of one TCK test land on different replicas. Redis: REDIS_URL, or a
// redis-server of its own on a free loopback port (stopped with this process, by its pid).
// Prints one line "SERVED <proxy url>" on stdout; stops on SIGTERM/SIGINT. Run the suite with the
// project's runner by putting this file beside it (docs/design.md, "Served agents as a fleet").
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { roundRobinProxy } from '../round-robin-proxy.mjs';

const project = process.env.PROJECT ?? process.cwd();
const { SymfonicAgent, serveAgent } = await import(project + '/dist/index.js');
const { RedisTaskStore } = await import(project + '/dist/remote/index.js');
const { scriptedModel } = await import(project + '/dist/testing/index.js');

const token = process.env.TCK_TOKEN ?? 'tck-token';
const slowMs = Number(process.env.SLOW_MS ?? 3000);

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function ownRedis() {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  process.on('exit', () => child.kill('SIGTERM'));
  const { Redis } = await import('ioredis');
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: (n) => (n > 50 ? null : 100) });
  await probe.connect();
  probe.disconnect();
  return `redis://127.0.0.1:${port}`;
}

const textOf = (content) => (typeof content === 'string' ? content : JSON.stringify(content));
const model = scriptedModel((request) => {
  const task = textOf(request.messages.find((m) => m.role === 'user')?.content ?? '');
  const text = `TCK-ANSWER: ${task}`;
  if (/slow/i.test(task)) return { text, delayMs: slowMs, usage: { inputTokens: 5, outputTokens: 1 } };
  return { text, usage: { inputTokens: 5, outputTokens: 1 } };
}, { modelName: 'tck-scripted' });

const header = (req, name) => {
  const v = req?.headers?.[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
};

const proxy = await roundRobinProxy(Number(process.env.PORT ?? 0));
const shared = { url: process.env.REDIS_URL ?? (await ownRedis()), keyPrefix: `symfonic-tck:${randomBytes(4).toString('hex')}`, snapshotKey: randomBytes(32).toString('hex') };
const replicas = [];
for (let i = 0; i < 2; i++) {
  const tasks = new RedisTaskStore(shared);
  const agent = new SymfonicAgent({ name: 'tck-echo', description: 'Answers every message with a fixed text (symfonic under the A2A TCK).', instructions: 'You answer.', modelProvider: model });
  const served = await serveAgent(agent, {
    host: '127.0.0.1',
    publicUrl: proxy.url,
    tasks,
    authenticate: (req) => (header(req, 'authorization') === `Bearer ${token}` ? { principal: 'tck', tenants: ['tck'] } : null),
  });
  replicas.push({ served, tasks });
}
proxy.upstreams = replicas.map((r) => r.served.url);
console.log(`SERVED ${proxy.url}`);
const stop = async () => {
  for (const r of replicas) await r.served.close();
  for (const r of replicas) await r.tasks.close();
  await proxy.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
