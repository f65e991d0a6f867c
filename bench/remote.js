// @ts-check
// The remote hop cases: one delegated hop to a child served by serveAgent over loopback, against
// the floor of a bare node:http POST round trip carrying the same request and response bytes,
// measured in the same rounds; and the same hop streamed (SendStreamingMessage over SSE), with
// and without the caller listening to the served tree's events, against the unstreamed one.
// Run alone: node --expose-gc bench/remote.js [--quick] [--split] [--sdk-transport]
// (--split adds the pieces a hop is made of; --sdk-transport times the A2A SDK's client in
// place of remoteChild's own JSON-RPC transport, docs/design.md "Remote children"); or from
// bench/run.js with --only=remote_hop.
import { Agent, request, createServer } from 'node:http';
import { MetricsCollector, SubAgent, SymfonicAgent, TenantBudgets, priceTable } from '../dist/index.js';
import { remoteChild, serveAgent } from '../dist/remote/index.js';
import { RemoteChildAgent } from '../dist/remote/remote-child.js';
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
 * node:http (keep-alive, as the global agent is in Node 20) and parsing the answer: a JSON-RPC
 * round trip with nothing of A2A or symfonic in it.
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
 * Records the body and headers of the requests it sees: authenticate is handed the request
 * before the server reads it, so a second 'data' listener sees the same bytes remoteChild sent.
 */
function bodyRecorder() {
  /** @type {{ body: Promise<string>, headers: import('node:http').IncomingHttpHeaders }[]} */
  const seen = [];
  let armed = false;
  return {
    arm: () => ((armed = true), (seen.length = 0)),
    /** @param {import('node:http').IncomingMessage} req */
    see(req) {
      if (!armed) return;
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      seen.push({ headers: { ...req.headers }, body: new Promise((r) => req.once('end', () => r(Buffer.concat(chunks).toString('utf8')))) });
    },
    last: () => {
      armed = false;
      const s = seen[seen.length - 1];
      if (!s) throw new Error('remote_hop: no request was recorded');
      return s;
    },
  };
}

/**
 * A node:http client posting `body` with `headers` (keep-alive), a fresh child run id each call:
 * the served side refuses nothing it would accept from remoteChild.
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
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
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

const delegating = () => scriptedModel((r) => (afterTools(r) ? { text: 'done', usage: USAGE } : { toolCalls: [{ name: 'run_agent', arguments: { name: 'child', task: TASK } }], usage: USAGE }));

/**
 * @param {{ quick: boolean, split?: boolean, sdkTransport?: boolean, report: (r: import('./harness.js').CaseResult) => void, sdk?: import('./harness.js').Sdk }} ctx
 */
export async function remoteHopCase({ quick, split = false, sdkTransport = false, report, sdk }) {
  const scope = Object.freeze({ tenantId: TENANT });
  const options = Object.freeze({ scope });
  const listened = Object.freeze({ scope, onEvent: () => undefined });
  const models = [];
  const model = (/** @type {import('../dist/testing/index.js').ScriptedModel} */ m) => (models.push(m), m);
  const servedModel = model(scriptedModel(() => ({ text: 'child answer', usage: USAGE })));
  const served = new SymfonicAgent({ name: 'child', modelProvider: servedModel, metricsCollector: collector() });
  const recorder = bodyRecorder();
  const server = await serveAgent(served, {
    authenticate: (req) => {
      recorder.see(/** @type {import('node:http').IncomingMessage} */ (req));
      return req.headers.authorization === `Bearer ${TOKEN}` ? { principal: 'bench', tenants: [TENANT] } : null;
    },
  });
  const child = (/** @type {{ stream?: boolean }} */ o) => remoteChild({ name: 'child', url: server.url, description: 'Answers one question.', headers: { authorization: `Bearer ${TOKEN}` }, ...o });
  const parentOf = (/** @type {SubAgent} */ sub) => new SymfonicAgent({ name: 'parent', modelProvider: model(delegating()), metricsCollector: collector(), subAgents: [sub] });
  const unstreamedOptions = { name: 'child', url: server.url, description: 'Answers one question.', headers: { authorization: `Bearer ${TOKEN}` }, stream: false };
  const unstreamed = parentOf(sdkTransport ? new SubAgent({ name: 'child', agent: new RemoteChildAgent(unstreamedOptions, { viaSdk: true }), description: 'Answers one question.' }) : child({ stream: false }));
  const streamed = parentOf(child({}));
  const leaf = new SymfonicAgent({ name: 'leaf', modelProvider: model(scriptedModel(() => ({ text: 'child answer', usage: USAGE }))), metricsCollector: collector() });
  recorder.arm();
  const first = await unstreamed.run('Ask the child.', options);
  if (!first.finalResponse.startsWith('done')) throw new Error(`remote_hop: unexpected answer ${first.finalResponse}`);
  for (const p of [streamed]) if (!(await p.run('Ask the child.', listened)).finalResponse.startsWith('done')) throw new Error('remote_hop: the streamed hop failed');
  // The floor carries the same bytes: the request remoteChild sent (unstreamed), and the served agent's reply to it.
  recorder.arm();
  await unstreamed.run('Ask the child.', options);
  const sentRecord = recorder.last();
  const sent = await sentRecord.body;
  const sentHeaders = sentRecord.headers;
  const hopHeaders = Object.fromEntries(['authorization', 'traceparent', 'tracestate', 'baggage', 'a2a-version', 'a2a-extensions', 'content-type', 'accept'].filter((k) => typeof sentHeaders[k] === 'string').map((k) => [k, String(sentHeaders[k])]));
  const answered = await fetch(server.url, { method: 'POST', body: sent, headers: hopHeaders });
  const payload = { body: sent, reply: await answered.text() };
  const bare = await bareRoundTrip(payload.body, payload.reply);
  const forget = () => {
    for (const m of models) m.calls.length = 0;
    sdk?.reset();
  };
  const n = quick ? 200 : 1000;
  const rounds = quick ? 5 : 11;
  /** @type {[string, () => Promise<unknown>][]} */
  const parts = [
    ['parent', () => unstreamed.run('Ask the child.', options)],
    ['streamed', () => streamed.run('Ask the child.', options)],
    ['events', () => streamed.run('Ask the child.', listened)],
    ['leaf', () => leaf.run('Answer directly.', options)],
    ['floor', bare.op],
  ];
  /** @type {(() => unknown)[]} */
  const closers = [];
  if (split) {
    const withHeaders = poster(bare.url, hopHeaders, payload.body);
    const toServed = poster(server.url, hopHeaders, payload.body);
    const card = (await (await fetch(`${server.url}/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })).text()).replaceAll(`${server.url}/`, '__URL__');
    const canned = await cannedAgent(card, payload.reply);
    const client = remoteChild({ name: 'child', url: canned.url, description: 'Answers one question.', headers: { authorization: `Bearer ${TOKEN}` }, stream: false });
    const childOptions = { runId: 'split-child', rootRunId: 'split-root', parentRunId: 'split-root', scope, agentDepth: 1, maxAgentDepth: 5 };
    const localChild = new SymfonicAgent({ name: 'child', modelProvider: model(scriptedModel(() => ({ text: 'child answer', usage: USAGE }))), metricsCollector: collector() });
    const local = parentOf(new SubAgent({ name: 'child', agent: localChild, description: 'Answers one question.' }));
    parts.push(
      ['floor_hop_headers', withHeaders.op],
      ['client_vs_canned', () => client.agent.run(TASK, /** @type {never} */ (childOptions))],
      ['post_to_served', toServed.op],
      ['local_parent', () => local.run('Ask the child.', options)],
    );
    closers.push(withHeaders.close, toServed.close, () => /** @type {{ close(): void }} */ (client.agent).close(), canned.close);
  }
  for (const [, op] of parts) await timeSequential(n, op);
  forget();
  /** @type {Record<string, import('./harness.js').Timing[]>} */
  const times = Object.fromEntries(parts.map(([part]) => [part, /** @type {import('./harness.js').Timing[]} */ ([])]));
  /** @type {Record<'hop' | 'streamed' | 'events', import('./harness.js').Timing[]>} */
  const hops = { hop: [], streamed: [], events: [] };
  /** @type {Record<string, number[]>} */
  const ratios = { hop: [], cpuHop: [], streamed: [], events: [] };
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < parts.length; i++) {
      const [part, op] = /** @type {[string, () => Promise<unknown>]} */ (parts[(i + r) % parts.length]);
      times[part]?.push(await timeSequential(n, op));
      forget();
    }
    const at = (/** @type {string} */ part) => /** @type {import('./harness.js').Timing} */ (times[part]?.[r]);
    const l = at('leaf');
    const f = at('floor');
    // The parent's own answer and the served child's run are leaf runs either way; what is left
    // is the hop: the delegation, the A2A client and server, and the HTTP round trip.
    const hopOf = (/** @type {import('./harness.js').Timing} */ p) => ({ wall: p.wall - 2 * l.wall, cpu: p.cpu - 2 * l.cpu });
    const h = hopOf(at('parent'));
    const s = hopOf(at('streamed'));
    const e = hopOf(at('events'));
    hops.hop.push(h);
    hops.streamed.push(s);
    hops.events.push(e);
    ratios.hop.push(h.wall / f.wall);
    ratios.cpuHop.push(h.cpu / f.cpu);
    ratios.streamed.push(at('streamed').wall / at('parent').wall);
    ratios.events.push(at('events').wall / at('parent').wall);
  }
  for (const close of closers) await close();
  await server.close();
  await bare.close();
  const med = (/** @type {import('./harness.js').Timing[] | undefined} */ ts) => round2(quantile((ts ?? []).map((t) => t.wall), 0.5));
  report(result('remote_floor', times.floor ?? [], n, { request_bytes: Buffer.byteLength(payload.body), reply_bytes: Buffer.byteLength(payload.reply) }));
  const hop = result('remote_hop', hops.hop, n, { parent_with_remote_child_us: med(times.parent), leaf_us: med(times.leaf), transport: sdkTransport ? 'a2a-sdk client' : 'json-rpc (own)' });
  hop.hop_over_floor = round2(quantile(ratios.hop, 0.5));
  hop.cpu_hop_over_floor = round2(quantile(ratios.cpuHop, 0.5));
  hop.note = `remote hop/bare POST ${hop.hop_over_floor} (cpu ${hop.cpu_hop_over_floor}; goal <= 3)`;
  report(hop);
  const streamedResult = result('remote_hop_stream', hops.streamed, n, { parent_with_remote_child_us: med(times.streamed) });
  streamedResult.stream_over_unstreamed = round2(quantile(ratios.streamed, 0.5));
  streamedResult.note = `streamed parent/unstreamed parent ${streamedResult.stream_over_unstreamed} (goal <= 1.3)`;
  report(streamedResult);
  const eventsResult = result('remote_hop_events', hops.events, n, { parent_with_remote_child_us: med(times.events) });
  eventsResult.events_over_unstreamed = round2(quantile(ratios.events, 0.5));
  eventsResult.note = `listened streamed parent (the tree's events cross the wire)/unstreamed parent ${eventsResult.events_over_unstreamed}`;
  report(eventsResult);
  for (const [part] of parts.slice(5)) report(result(`remote_split_${part}`, times[part] ?? [], n));
}

// Run on its own: node --expose-gc bench/remote.js [--quick] [--split] [--sdk-transport]
if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick');
  const split = process.argv.includes('--split');
  const sdkTransport = process.argv.includes('--sdk-transport');
  /** @type {import('./harness.js').CaseResult[]} */
  const results = [];
  const sdk = installSdk();
  remoteHopCase({ quick, split, sdkTransport, sdk, report: (r) => (results.push(r), emit(r)) })
    .then(() => sdk.shutdown())
    .then(() => printTable(results))
    .catch((error) => {
      process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 1;
    });
}
