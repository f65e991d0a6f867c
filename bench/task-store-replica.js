// @ts-check
// One replica of the task_store_events bench case, in its own process as a fleet runs it: a leaf
// whose model streams CHUNKS deltas, served on a RedisTaskStore. Its store options arrive in the
// first IPC message; it answers { url } and runs until it is killed.
import { SymfonicAgent } from '../dist/index.js';
import { RedisTaskStore, serveAgent } from '../dist/remote/index.js';
import { scriptedModel } from '../dist/testing/index.js';

const CHUNKS = 30;
const CHUNK_DELAY_MS = 15;

if (process.send !== undefined) {
  const shared = await new Promise((resolve) => process.once('message', resolve));
  const chunks = Array.from({ length: CHUNKS }, (_, i) => `c${i} `);
  const model = scriptedModel(() => ({ chunks, delayMs: 100, chunkDelayMs: CHUNK_DELAY_MS }));
  const authenticate = (/** @type {{ headers: Record<string, unknown> }} */ req) => (req.headers.authorization === 'Bearer bench' ? { principal: 'bench', tenants: ['bench'] } : null);
  const server = await serveAgent(new SymfonicAgent({ name: 'leaf', modelProvider: model }), { authenticate, tasks: new RedisTaskStore(/** @type {any} */ (shared)) });
  process.send({ url: server.url });
}
