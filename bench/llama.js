// @ts-check
// Per-call latency against a real llama-server (scripts/stack-llama.mjs serve): one agent run of
// one model call through openAICompatible, against the same request sent with a bare fetch, in
// alternating rounds, so the difference is what symfonic adds to a real call; and the time to the
// first streamed text. The output length is pinned (max_tokens, and ignore_eos so the model never
// stops early), so every call does the same work.
// Usage: node bench/llama.js [--base-url http://127.0.0.1:24808/v1] [--rounds N] [--tokens N]
import { FrameworkConfig, SymfonicAgent, openAICompatible } from '../dist/index.js';
import { quantile, round2 } from './harness.js';

const args = process.argv.slice(2);
const arg = (name, fallback) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const base = Number(process.env.SYMFONIC_STACK_PORT_BASE || 24000);
const baseURL = arg('base-url', `http://127.0.0.1:${base + 808}/v1`);
const rounds = Number(arg('rounds', '20'));
const tokens = Number(arg('tokens', '16'));
const MODEL = 'SmolLM2-135M-Instruct';
const PROMPT = 'Count from one to twenty in words.';

/** Adds ignore_eos (a llama-server extension) to every request, so each call writes `tokens`. */
const pinned = /** @type {typeof fetch} */ ((input, init) => {
  const body = JSON.parse(String(init?.body));
  return fetch(input, { ...init, body: JSON.stringify({ ...body, ignore_eos: true }) });
});

const agent = new SymfonicAgent({
  name: 'bench',
  modelProvider: openAICompatible({ baseURL, model: MODEL, fetch: pinned, maxRetries: 0 }),
  config: new FrameworkConfig({ model: { temperature: 0, maxTokens: tokens } }),
});

async function bare() {
  const r = await fetch(`${baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: PROMPT }], temperature: 0, max_tokens: tokens, ignore_eos: true }),
  });
  const json = await r.json();
  if (json.usage.completion_tokens !== tokens) throw new Error(`the server wrote ${json.usage.completion_tokens} tokens, not ${tokens}`);
}

async function viaSymfonic() {
  const reply = await agent.run(PROMPT, { scope: { tenantId: 'bench' } });
  if (reply.usage.outputTokens !== tokens) throw new Error(`the server wrote ${reply.usage.outputTokens} tokens, not ${tokens}`);
}

async function firstText() {
  const t0 = performance.now();
  let first = NaN;
  const stream = agent.stream(PROMPT, { scope: { tenantId: 'bench' } });
  for await (const e of stream) if (e.type === 'text.delta' && Number.isNaN(first)) first = performance.now() - t0;
  await stream.result;
  return first;
}

/** @param {() => Promise<unknown>} fn */
async function time(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

await bare();
await viaSymfonic();
const samples = { bare: /** @type {number[]} */ ([]), symfonic: /** @type {number[]} */ ([]), first: /** @type {number[]} */ ([]) };
for (let i = 0; i < rounds; i++) {
  samples.bare.push(await time(bare));
  samples.symfonic.push(await time(viaSymfonic));
  samples.first.push(await firstText());
}
const row = (/** @type {string} */ name, /** @type {number[]} */ xs) => {
  return { case: name, p50_ms: round2(quantile(xs, 0.5)), p90_ms: round2(quantile(xs, 0.9)), min_ms: round2(Math.min(...xs)) };
};
console.log(`${rounds} rounds against ${baseURL}`);
console.table([row(`bare fetch, ${tokens} tokens`, samples.bare), row(`agent.run, ${tokens} tokens`, samples.symfonic), row('agent.stream, first text', samples.first)]);
await agent.close();
