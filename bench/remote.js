// @ts-check
// The remote_hop case: one delegated hop to a child served by serveAgent over loopback, against
// the floor of a bare node:http POST round trip carrying the same request and response bytes,
// measured in the same rounds. Run alone: node --expose-gc bench/remote.js [--quick] [--split]
// (--split adds the pieces a hop is made of, docs/design.md "Remote children"); or from
// bench/run.js with --only=remote_hop.
import { Agent, request, createServer } from 'node:http';
import { MetricsCollector, SubAgent, SymfonicAgent, TenantBudgets, priceTable } from '../dist/index.js';
import { RemoteChildAgent, remoteChild, serveAgent } from '../dist/remote/index.js';
import { scriptedModel } from '../dist/testing/index.js';
import { emit, installSdk, printTable, quantile, result, round2, timeSequential } from './harness.js';

const TENANT = 'bench-tenant';
const TOKEN = 'bench-token';
const USAGE = Object.freeze({ inputTokens: 120, outputTokens: 40 });
const TASK = 'Summarise the quarterly figures.';
const PRICES = priceTable({ 'scripted-model': { inputPerMTok: 3, outputPerMTok: 15 } });

function collector() {
  return new MetricsCollector({ prices: PRICES, budgets: new TenantBudgets({ limits: { [TENANT]: { maxTokens: 1e15, maxCostUsd: 1e12 } } }) });
}

/** @param {import('../dist/index.js').ModelRequest} r */
const afterTools = (r) => r.messages[r.messages.length - 1]?.role === 'tool';

/**
 * A bare server that reads the body and answers `reply`, and a client posting `body` with
 * node:http (keep-alive, as the global agent is in Node 20): a JSON-RPC round trip with nothing
 * of A2A or symfonic in it.
 * @param {string} body @param {string} reply
 */
async function bareRoundTrip(body, reply) {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) }).end(reply);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
  const op = () =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      });
      req.on('error', reject);
      req.end(body);
    });
  return { op, url: `http://127.0.0.1:${port}/`, close: () => new Promise((r) => server.close(() => r(undefined))) };
}

/**
 * Records the body of the next request it sees: authenticate is handed the request before the
 * server reads it, so a second 'data' listener sees the same bytes remoteChild sent.
 */
function bodyRecorder() {
  /** @type {Promise<string> | undefined} */
  let recorded;
  /** @type {import('node:http').IncomingHttpHeaders} */
  let headers = {};
  let armed = true;
  return {
    /** @param {import('node:http').IncomingMessage} req */
    see(req) {
      if (!armed) return;
      armed = false;
      headers = { ...req.headers };
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      recorded = new Promise((r) => req.once('end', () => r(Buffer.concat(chunks).toString('utf8'))));
    },
    body: () => recorded ?? Promise.reject(new Error('remote_hop: no request was recorded')),
    headers: () => headers,
  };
}

/**
 * A node:http client posting `body` with `headers` (keep-alive), fresh ids each call where the
 * baggage names the child's run: the served side refuses nothing it would accept from remoteChild.
 * @param {string} url @param {Record<string, string>} headers @param {string} body
 */
function poster(url, headers, body) {
  const agent = new Agent({ keepAlive: true });
  const { hostname, port, pathname } = new URL(url);
  let seq = 0;
  const op = () =>
    new Promise((resolve, reject) => {
      /** @type {Record<string, string>} */
      const h = { ...headers, 'content-length': String(Buffer.byteLength(body)) };
      if (h.baggage) h.baggage = h.baggage.replace(/symfonic\.run_id=[^,]*/, `symfonic.run_id=split${++seq}`);
      const req = request({ hostname, port, path: pathname, method: 'POST', agent, headers: h }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      });
      req.on('error', reject);
      req.end(body);
    });
  return { op, close: () => agent.destroy() };
}

/**
 * A server that is only bytes: the served agent's card (pointing here) and, to any POST, the
 * served agent's reply with the request's id. What remoteChild costs on its own is its time
 * against this, minus the floor.
 * @param {string} card @param {string} reply
 */
async function cannedAgent(card, reply) {
  let url = '';
  const server = createServer((req, res) => {
    if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'application/json' }).end(card.replaceAll('__URL__', url));
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const { id } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const out = reply.replace(/^\{"jsonrpc":"2\.0","id":[^,]*,/, `{"jsonrpc":"2.0","id":${JSON.stringify(id)},`);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) }).end(out);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  url = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/`;
  return { url, close: () => new Promise((r) => server.close(() => r(undefined))) };
}

/**
 * @param {{ quick: boolean, split?: boolean, report: (r: import('./harness.js').CaseResult) => void, sdk?: import('./harness.js').Sdk }} ctx
 */
export async function remoteHopCase({ quick, split = false, report, sdk }) {
  const scope = Object.freeze({ tenantId: TENANT });
  const options = Object.freeze({ scope });
  const leafModel = scriptedModel(() => ({ text: 'child answer', usage: USAGE }));
  const servedModel = scriptedModel(() => ({ text: 'child answer', usage: USAGE }));
  const delegating = () => scriptedModel((r) => (afterTools(r) ? { text: 'done', usage: USAGE } : { toolCalls: [{ name: 'run_agent', arguments: { name: 'child', task: TASK } }], usage: USAGE }));
  const parentModel = delegating();
  const localParentModel = delegating();
  const localModel = scriptedModel(() => ({ text: 'child answer', usage: USAGE }));
  const served = new SymfonicAgent({ name: 'child', modelProvider: servedModel, metricsCollector: collector() });
  const recorder = bodyRecorder();
  const server = await serveAgent(served, {
    authenticate: (req) => {
      recorder.see(req);
      return req.headers.authorization === `Bearer ${TOKEN}` ? { principal: 'bench', tenants: [TENANT] } : null;
    },
  });
  const parentCollector = collector();
  const parent = new SymfonicAgent({
    name: 'parent',
    modelProvider: parentModel,
    metricsCollector: parentCollector,
    subAgents: [remoteChild({ name: 'child', url: server.url, description: 'Answers one question.', headers: { authorization: `Bearer ${TOKEN}` } })],
  });
  const leaf = new SymfonicAgent({ name: 'leaf', modelProvider: leafModel, metricsCollector: collector() });
  const first = await parent.run('Ask the child.', options);
  if (!first.finalResponse.startsWith('done')) throw new Error(`remote_hop: unexpected answer ${first.finalResponse}`);
  // The floor carries the same bytes: the request remoteChild sent, and the served agent's reply to it.
  const sent = await recorder.body();
  const answered = await fetch(server.url, { method: 'POST', body: sent, headers: { authorization: `Bearer ${TOKEN}`, 'a2a-version': '1.0', 'content-type': 'application/json' } });
  const payload = { body: sent, reply: await answered.text() };
  const bare = await bareRoundTrip(payload.body, payload.reply);
  const forget = () => {
    for (const m of [leafModel, servedModel, parentModel, localModel, localParentModel]) m.calls.length = 0;
    sdk?.reset();
  };
  const n = quick ? 200 : 1000;
  const rounds = quick ? 5 : 11;
  /** @type {[string, () => Promise<unknown>][]} */
  const parts = [
    ['parent', () => parent.run('Ask the child.', options)],
    ['leaf', () => leaf.run('Answer directly.', options)],
    ['floor', bare.op],
  ];
  // --split: where a hop goes. The bare POST with the hop's own headers; remoteChild against a
  // server of canned bytes; a bare POST to serveAgent (the served side and its run); and a parent
  // with a local child (the delegation turn as in `hop`).
  const sentHeaders = recorder.headers();
  const hopHeaders = Object.fromEntries(['authorization', 'traceparent', 'tracestate', 'baggage', 'a2a-version', 'content-type', 'accept'].filter((k) => typeof sentHeaders[k] === 'string').map((k) => [k, String(sentHeaders[k])]));
  /** @type {(() => unknown)[]} */
  const closers = [];
  if (split) {
    const withHeaders = poster(bare.url, hopHeaders, payload.body);
    const toServed = poster(server.url, hopHeaders, payload.body);
    const card = (await (await fetch(`${server.url}/.well-known/agent-card.json`)).text()).replaceAll(`${server.url}/`, '__URL__');
    const canned = await cannedAgent(card, payload.reply);
    const client = new RemoteChildAgent({ name: 'child', url: canned.url, description: 'Answers one question.', headers: { authorization: `Bearer ${TOKEN}` } });
    const childOptions = { runId: 'split-child', rootRunId: 'split-root', parentRunId: 'split-root', scope, agentDepth: 1, maxAgentDepth: 5 };
    const localChild = new SymfonicAgent({ name: 'child', modelProvider: localModel, metricsCollector: collector() });
    const local = new SymfonicAgent({ name: 'parent', modelProvider: localParentModel, metricsCollector: collector(), subAgents: [new SubAgent({ name: 'child', agent: localChild, description: 'Answers one question.' })] });
    parts.push(
      ['floor_hop_headers', withHeaders.op],
      ['client_vs_canned', () => client.run(TASK, /** @type {never} */ (childOptions))],
      ['post_to_served', toServed.op],
      ['local_parent', () => local.run('Ask the child.', options)],
    );
    closers.push(withHeaders.close, toServed.close, () => client.close(), canned.close);
  }
  for (const [, op] of parts) await timeSequential(n, op);
  forget();
  /** @type {Record<string, import('./harness.js').Timing[]>} */
  const times = Object.fromEntries(parts.map(([part]) => [part, /** @type {import('./harness.js').Timing[]} */ ([])]));
  const hop = [];
  const ratios = [];
  const cpuRatios = [];
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < parts.length; i++) {
      const [part, op] = /** @type {[string, () => Promise<unknown>]} */ (parts[(i + r) % parts.length]);
      times[part]?.push(await timeSequential(n, op));
      forget();
    }
    const p = /** @type {import('./harness.js').Timing} */ (times.parent?.[r]);
    const l = /** @type {import('./harness.js').Timing} */ (times.leaf?.[r]);
    const f = /** @type {import('./harness.js').Timing} */ (times.floor?.[r]);
    // The parent's own answer and the served child's run are leaf runs either way; what is left
    // is the hop: the delegation, the A2A client and server, and the HTTP round trip.
    const h = { wall: p.wall - 2 * l.wall, cpu: p.cpu - 2 * l.cpu };
    hop.push(h);
    ratios.push(h.wall / f.wall);
    cpuRatios.push(h.cpu / f.cpu);
  }
  for (const close of closers) await close();
  await server.close();
  await bare.close();
  if (parentCollector.openRuns !== 0) throw new Error(`remote_hop: ${parentCollector.openRuns} runs left open`);
  const med = (/** @type {import('./harness.js').Timing[] | undefined} */ ts) => round2(quantile((ts ?? []).map((t) => t.wall), 0.5));
  report(result('remote_floor', times.floor ?? [], n, { request_bytes: Buffer.byteLength(payload.body), reply_bytes: Buffer.byteLength(payload.reply) }));
  const r = result('remote_hop', hop, n, { parent_with_remote_child_us: med(times.parent), leaf_us: med(times.leaf) });
  r.hop_over_floor = round2(quantile(ratios, 0.5));
  r.cpu_hop_over_floor = round2(quantile(cpuRatios, 0.5));
  r.note = `remote hop/bare POST ${r.hop_over_floor} (cpu ${r.cpu_hop_over_floor}; target <= 2)`;
  report(r);
  for (const [part] of parts.slice(3)) report(result(`remote_split_${part}`, times[part] ?? [], n));
}

// Run on its own: node --expose-gc bench/remote.js [--quick] [--split]
if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick');
  const split = process.argv.includes('--split');
  /** @type {import('./harness.js').CaseResult[]} */
  const results = [];
  const sdk = installSdk();
  remoteHopCase({ quick, split, sdk, report: (r) => (results.push(r), emit(r)) })
    .then(() => sdk.shutdown())
    .then(() => printTable(results))
    .catch((error) => {
      process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 1;
    });
}
