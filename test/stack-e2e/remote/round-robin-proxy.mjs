// One URL in front of a fleet, as a load balancer puts it: a loopback HTTP proxy that sends each
// JSON-RPC call (a POST) to the next replica in turn, streams answers back as they come (SSE
// included), and notes where each call went, so a test can show that the calls of one task landed
// on different replicas. Card reads (GET) go to the first replica. Bounded: request bodies over
// 1 MiB and upstream calls over 60 s are refused; `close()` stops it.
// Types: round-robin-proxy.d.mts.
import { createServer, request } from 'node:http';

const MAX_BODY = 1 << 20;
const UPSTREAM_TIMEOUT_MS = 60_000;

/** The request's body, or undefined past MAX_BODY. */
function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) return resolve(undefined);
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The JSON-RPC method of a call and the task it names. */
function describe(body) {
  try {
    const rpc = JSON.parse(body.toString('utf8'));
    const taskId = rpc.params?.id ?? rpc.params?.message?.taskId;
    return { method: String(rpc.method), taskId: taskId === '' ? undefined : taskId };
  } catch {
    return { method: '(not JSON)', taskId: undefined };
  }
}

/** A blocking call that made a task: its answer names it. */
function noteTask(answer, call) {
  const chunks = [];
  answer.on('data', (c) => chunks.push(c));
  answer.on('end', () => {
    try {
      call.taskId = JSON.parse(Buffer.concat(chunks).toString('utf8')).result?.task?.id;
    } catch {
      // Not a JSON-RPC answer: the call stays unnamed.
    }
  });
}

/** Starts the proxy on loopback, on `port` (0: a free one). */
export async function roundRobinProxy(port = 0) {
  let next = 0;
  const calls = [];
  const proxy = { url: '', calls, upstreams: [], close: async () => undefined };
  const forward = async (req, res) => {
    const body = await readBody(req);
    if (body === undefined) return void res.writeHead(413).end();
    if (proxy.upstreams.length === 0) return void res.writeHead(503).end();
    let replica = 0;
    let call;
    if (req.method === 'POST') {
      replica = next++ % proxy.upstreams.length;
      calls.push((call = { replica, ...describe(body) }));
    }
    const target = new URL(req.url ?? '/', proxy.upstreams[replica]);
    const headers = { ...req.headers, host: target.host, 'content-length': String(body.length) };
    const up = request(target, { method: req.method, headers, timeout: UPSTREAM_TIMEOUT_MS }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      if (call !== undefined && call.taskId === undefined && String(answer.headers['content-type']).startsWith('application/json')) noteTask(answer, call);
      answer.pipe(res);
    });
    up.on('timeout', () => up.destroy(new Error('upstream timed out')));
    up.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    // A client that hangs up mid-stream hangs up on the replica too.
    res.on('close', () => up.destroy());
    up.end(body);
  };
  const server = createServer((req, res) => void forward(req, res).catch(() => res.destroy()));
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${server.address().port}`;
  proxy.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
