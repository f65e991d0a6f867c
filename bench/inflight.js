// @ts-check
// The `inflight` case: heap per delegated root in flight. 5,000 roots each wait on their child's
// model call (held until released), with and without the SDK: what a server holding that many
// trees open pays in memory for each, before any of them answers.
import { SubAgentSpec, SymfonicAgent } from '../dist/index.js';
import { scriptedModel } from '../dist/testing/index.js';
import { disableSdk, installSdk, round2, settleHeap } from './harness.js';

const USAGE = Object.freeze({ inputTokens: 120, outputTokens: 40 });
const TASK_ARGS = JSON.stringify({ name: 'child', task: 'Summarise the quarterly figures.' });

/** @param {number} roots @param {boolean} withSdk */
async function measure(roots, withSdk) {
  const sdk = withSdk ? installSdk() : undefined;
  /** @type {(() => void)[]} */
  const waiting = [];
  let arrived = 0;
  /** @type {() => void} */
  let allArrived = () => {};
  const arrivedAll = new Promise((resolve) => (allArrived = () => resolve(undefined)));
  const childModel = scriptedModel(
    () =>
      new Promise((resolve) => {
        waiting.push(() => resolve({ text: 'child answer', usage: USAGE }));
        if (++arrived === roots) allArrived();
      }),
  );
  const toolTurn = Object.freeze({ toolCalls: [{ name: 'run_agent', arguments: TASK_ARGS }], usage: USAGE });
  const answer = Object.freeze({ text: 'done', usage: USAGE });
  /** @param {import('../dist/index.js').ModelRequest} r */
  const afterTools = (r) => r.messages[r.messages.length - 1]?.role === 'tool';
  const parentModel = scriptedModel((request) => (afterTools(request) ? answer : toolTurn));
  const parent = new SymfonicAgent({
    name: 'parent',
    modelProvider: parentModel,
    subAgents: [new SubAgentSpec({ name: 'child', description: 'Answers one question.', modelProvider: childModel })],
  });
  const scope = Object.freeze({ tenantId: 'bench-tenant' });
  // Warm-up: one tree through, so code and caches are in place before the heap is read.
  const warm = parent.run('Ask the child.', { scope });
  await new Promise((r) => setImmediate(r));
  while (waiting.length > 0) waiting.shift()?.();
  await warm;
  arrived = 0;
  parentModel.calls.length = 0;
  childModel.calls.length = 0;
  sdk?.reset();
  const before = await settleHeap();
  const runs = Array.from({ length: roots }, () => parent.run('Ask the child.', { scope }));
  await arrivedAll;
  // The requests the scripted models keep for assertions are not the runtime's.
  parentModel.calls.length = 0;
  childModel.calls.length = 0;
  sdk?.reset();
  const during = await settleHeap();
  for (const release of waiting.splice(0)) release();
  await Promise.all(runs);
  await sdk?.shutdown();
  if (!withSdk) disableSdk();
  return { perRootBytes: (during - before) / roots };
}

/** @param {{ quick: boolean; report: (r: import('./harness.js').CaseResult) => void }} io */
export async function inflightCase({ quick, report }) {
  const roots = quick ? 1000 : 5000;
  for (const withSdk of [false, true]) {
    disableSdk();
    const { perRootBytes } = await measure(roots, withSdk);
    const kb = round2(perRootBytes / 1024);
    report({
      case: withSdk ? 'inflight_sdk' : 'inflight',
      n: roots,
      median_us: NaN,
      p90_us: NaN,
      rounds: 1,
      per_root_kib: kb,
      note: `${kb} KiB heap per delegated root waiting on its child's model, ${withSdk ? 'with' : 'without'} the SDK (goal <= 7)`,
    });
  }
}
