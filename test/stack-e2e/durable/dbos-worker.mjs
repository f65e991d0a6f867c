// A worker process of the durable-engine tests (spawned by the *.test.ts files beside it): DBOS
// Transact on the stack's PostgreSQL, with the shape a durable tree takes — a root workflow whose
// steps run, then two child workflows started at once under ids we choose, each with three steps
// running concurrently, then a last step. Every step body appends a line to EXECUTIONS, so the
// test counts what really ran in which process.
//
//   node dbos-worker.mjs run ID       start workflow ID and wait for its answer
//   node dbos-worker.mjs recover ID   launch (DBOS recovers this executor's pending workflows) and wait for ID
//   node dbos-worker.mjs status ID    print ID's recorded status and answer
//
// Environment: DBOS_URL (the system database), EXECUTIONS (file), HOLD (a step, e.g. "b:0", whose
// body waits HOLD_MS after writing "<step> started"), EXECUTOR_ID (default "worker").
// Prints one JSON line per event on stdout.
import { appendFileSync } from 'node:fs';
import { DBOS, DBOSClient } from '@dbos-inc/dbos-sdk';

const [mode, id] = process.argv.slice(2);
const env = process.env;
const say = (event) => process.stdout.write(JSON.stringify(event) + '\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mark = (what) => appendFileSync(env.EXECUTIONS, `${process.pid} ${what}\n`);

/** A step's body: marks its start and end, and waits when it is the one held. */
async function body(name) {
  mark(`${name} started`);
  if (env.HOLD === name) await sleep(Number(env.HOLD_MS ?? 60_000));
  mark(`${name} done`);
  return `${name}@ok`;
}
const step = (name) => DBOS.runStep(() => body(name), { name });

const child = DBOS.registerWorkflow(
  async (label) => {
    // One turn's calls: started together, each step's id taken in call order before any await.
    const parts = await Promise.all([0, 1, 2].map((i) => step(`${label}:${i}`)));
    return parts.join(' ');
  },
  { name: 'e2e.child' },
);

const root = DBOS.registerWorkflow(
  async () => {
    const plan = await step('plan');
    const handles = await Promise.all(['a', 'b'].map((label) => DBOS.startWorkflow(child, { workflowID: `${DBOS.workflowID}/${label}` })(label)));
    const answers = await Promise.all(handles.map((h) => h.getResult()));
    const answer = await step('answer');
    return { plan, answers, answer };
  },
  { name: 'e2e.root' },
);

async function status() {
  const client = await DBOSClient.create({ systemDatabaseUrl: env.DBOS_URL });
  try {
    const s = await client.getWorkflow(id);
    say({ type: 'status', status: s?.status ?? null, output: s?.output ?? null });
  } finally {
    await client.destroy();
  }
}

async function main() {
  if (mode === 'status') return status();
  DBOS.setConfig({ name: 'symfonic-e2e', systemDatabaseUrl: env.DBOS_URL, executorID: env.EXECUTOR_ID ?? 'worker', applicationVersion: 'e2e-1', logLevel: 'error' });
  const t0 = performance.now();
  await DBOS.launch();
  say({ type: 'launched', ms: Math.round(performance.now() - t0) });
  const handle = mode === 'run' ? await DBOS.startWorkflow(root, { workflowID: id })() : DBOS.retrieveWorkflow(id);
  say({ type: 'result', result: await handle.getResult() });
  await DBOS.shutdown();
}

main().catch((error) => {
  say({ type: 'error', error: `${error?.name}: ${error?.message}` });
  process.exitCode = 1;
});
