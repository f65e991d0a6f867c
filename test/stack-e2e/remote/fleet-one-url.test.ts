/**
 * A served fleet behind one URL, as production runs it: two replica processes on one Redis, each
 * its own serveAgent and RedisTaskStore, behind a round-robin proxy that sends each call to the
 * next replica. The official Python a2a-sdk 1.x client and @a2a-js/sdk's client, given the proxy's
 * URL only, send, read, list, cancel, resume a paused task and subscribe to a running one; the
 * proxy's log shows the calls of one task landing on both replicas.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role, TaskState, type Part, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { testRedis, uniquePrefix } from '../redis/redis-server.js';
import { forkWorker, type Worker } from '../redis/workers.js';
import { pythons, runPython } from './python-venvs.js';
import { roundRobinProxy, type ProxiedCall, type RoundRobinProxy } from './round-robin-proxy.mjs';

const WORKER = fileURLToPath(new URL('./fleet-treasurer-worker.mjs', import.meta.url));

let redis: { url: string; close(): Promise<void> };
let proxy: RoundRobinProxy;
const workers: Worker[] = [];

beforeAll(async () => {
  redis = await testRedis();
  proxy = await roundRobinProxy();
  const store = { url: redis.url, keyPrefix: uniquePrefix('one-url').slice(0, -1), snapshotKey: randomBytes(32).toString('hex') };
  for (const name of ['replica-0', 'replica-1']) workers.push(forkWorker({ name, publicUrl: proxy.url, store }, WORKER));
  proxy.upstreams = await Promise.all(workers.map(async (w) => (await w.next<{ url: string }>('ready')).url));
}, 60_000);

afterAll(async () => {
  for (const w of workers) await w.kill('SIGTERM');
  await proxy?.close();
  await redis?.close();
});

/** Where the proxy sent the calls of `method` concerning `taskId`, in order (the first SendMessage of a task made it). */
const on = (calls: readonly ProxiedCall[], method: string, taskId: string): number[] => calls.filter((c) => c.method === method && c.taskId === taskId).map((c) => c.replica);

describe('two replicas behind one URL', () => {
  it('the official Python a2a-sdk 1.x: send, get, list, a pause resumed on the other replica, cancel and subscribe across replicas', async () => {
    const python = pythons()['a2a-1']!;
    const before = proxy.calls.length;
    const r = await runPython(python, 'a2a1_fleet_client.py', [proxy.url, 'acme']);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, any>;
    const calls = proxy.calls.slice(before);
    expect(out.sent.status.state).toBe('TASK_STATE_COMPLETED');
    const [sentOn, gotOn] = [on(calls, 'SendMessage', out.sent.id)[0], on(calls, 'GetTask', out.sent.id)[0]];
    expect(gotOn).toBe(1 - sentOn!);
    expect(out.got).toMatchObject({ id: out.sent.id, status: { state: 'TASK_STATE_COMPLETED' } });
    expect(out.got.artifacts[0].parts[0].text).toBe(`replica-${sentOn} says: hello`);
    // The pause was made on one replica; the decisions went to the other, which ran the wire.
    expect(out.paused.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const [pausedOn, resumedOn] = on(calls, 'SendMessage', out.paused.id);
    expect(resumedOn).toBe(1 - pausedOn!);
    expect(out.resumed.status.state).toBe('TASK_STATE_COMPLETED');
    expect(out.resumed.artifacts[0].parts[0].text).toBe(`paid: wired 42 on replica-${resumedOn}`);
    expect(out.listed.tasks.map((t: any) => t.id)).toEqual([out.paused.id, out.sent.id]);
    // The cancel reached the run on the other replica.
    expect(on(calls, 'CancelTask', out.cancelled.id)).toEqual([1 - on(calls, 'SendMessage', out.cancelled.id)[0]!]);
    expect(out.cancelled.status.state).toBe('TASK_STATE_CANCELED');
    // The subscription, on the replica not running the task, followed it to its end.
    const [watchedOn] = on(calls, 'SendMessage', out.watched.id);
    expect(on(calls, 'SubscribeToTask', out.watched.id)).toEqual([1 - watchedOn!]);
    expect(out.watched.status.state).toBe('TASK_STATE_WORKING');
    expect(out.subscribed.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    const answer = out.subscribed.find((e: any) => e.artifactUpdate)?.artifactUpdate.artifact.parts[0].text;
    expect(answer).toBe(`replica-${watchedOn} was slow`);
  });

  it("@a2a-js/sdk's client: the same, through the same URL", async () => {
    const before = proxy.calls.length;
    const client = await new ClientFactory().createFromUrl(proxy.url);
    const options = { serviceParameters: { authorization: 'Bearer evil' } };
    const send = async (parts: Part[], task?: Task, returnImmediately = false) => (await client.sendMessage(request(parts, task, returnImmediately), options)) as Task;
    const calls = (method: string, id: string) => on(proxy.calls.slice(before), method, id);
    const sent = await send(text('hello'));
    expect(sent.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const got = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined }, options);
    expect(calls('GetTask', sent.id)).toEqual([1 - calls('SendMessage', sent.id)[0]!]);
    expect(got.artifacts[0]?.parts[0]?.content).toEqual({ $case: 'text', value: `replica-${calls('SendMessage', sent.id)[0]} says: hello` });
    const paused = await send(text('pay 7'));
    expect(paused.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const interruption = (paused.status!.message!.parts[1]!.content as { value: any }).value.interruptions[0].id as string;
    const resumed = await send([{ content: { $case: 'data', value: { decisions: { [interruption]: { approve: true } } } }, mediaType: '', filename: '', metadata: undefined }], paused);
    const [pausedOn, resumedOn] = calls('SendMessage', paused.id);
    expect(resumedOn).toBe(1 - pausedOn!);
    expect(resumed.artifacts[0]?.parts[0]?.content).toEqual({ $case: 'text', value: `paid: wired 7 on replica-${resumedOn}` });
    const listed = await client.listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageSize: 10, pageToken: '', statusTimestampAfter: undefined }, options);
    expect(listed.tasks.map((t) => t.id)).toEqual([paused.id, sent.id]);
    const running = await send(text('slow 30000'), undefined, true);
    const cancelled = await client.cancelTask({ tenant: '', id: running.id, metadata: undefined }, options);
    expect(calls('CancelTask', running.id)).toEqual([1 - calls('SendMessage', running.id)[0]!]);
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const watched = await send(text('slow 1500'), undefined, true);
    const events = [];
    for await (const e of client.resubscribeTask({ tenant: '', id: watched.id }, options)) events.push(e.payload);
    const [watchedOn] = calls('SendMessage', watched.id);
    expect(calls('SubscribeToTask', watched.id)).toEqual([1 - watchedOn!]);
    const last = events.at(-1);
    expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const artifact = events.find((e) => e?.$case === 'artifactUpdate');
    expect(artifact?.$case === 'artifactUpdate' && artifact.value.artifact?.parts[0]?.content).toEqual({ $case: 'text', value: `replica-${watchedOn} was slow` });
  });
});

const text = (t: string): Part[] => [{ content: { $case: 'text', value: t }, mediaType: 'text/plain', filename: '', metadata: undefined }];

function request(parts: Part[], task: Task | undefined, returnImmediately: boolean): SendMessageRequest {
  return {
    tenant: '',
    message: { messageId: randomUUID(), contextId: task?.contextId ?? '', taskId: task?.id ?? '', role: Role.ROLE_USER, parts, metadata: undefined, extensions: [], referenceTaskIds: [] },
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately },
    metadata: undefined,
  };
}
