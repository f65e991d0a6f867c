// One replica of the served-fleet stack test, in its own process: a served treasurer on a
// RedisTaskStore, from the built package as an app server would run it. Its options arrive in the
// first IPC message; it reports { type: 'ready', url } and then runs until it is killed.
import { SymfonicAgent } from '../../../dist/index.js';
import { RedisTaskStore, serveAgent } from '../../../dist/remote/index.js';
import { scriptedModel } from '../../../dist/testing/index.js';

const options = await new Promise((resolve) => process.once('message', resolve));
const byToken = (req) => {
  const m = /^Bearer (evil|acme)$/.exec(String(req.headers.authorization));
  return m ? { principal: m[1], tenants: [m[1]] } : null;
};
// Every task runs until it is stopped: what a replica holds when it is killed mid-run.
const model = scriptedModel(() => ({ text: 'never', delayMs: 3_600_000 }));
const server = await serveAgent(new SymfonicAgent({ name: 'treasurer', modelProvider: model }), { authenticate: byToken, tasks: new RedisTaskStore(options) });
process.send({ type: 'ready', url: server.url });
