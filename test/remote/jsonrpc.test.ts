/** JSON-RPC 2.0 as serveAgent answers it: the request's id echoed, and the code the error is. */
import { afterEach, describe, expect, it } from 'vitest';
import { post, sendMessageBody, serveLeaf, type Served } from './helpers.js';

const open: Served[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.server.close()));
});

async function url(): Promise<string> {
  const s = await serveLeaf('researcher');
  open.push(s);
  return s.server.url;
}

const rpc = (body: object) => JSON.stringify({ jsonrpc: '2.0', ...body });
const message = (m: object) => ({ messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'find' }], ...m });

describe('the JSON-RPC envelope', () => {
  it('answers a body that is not JSON with -32700 (parse error), id null, HTTP 200', async () => {
    const r = await post(await url(), '{"jsonrpc": "2.0", "method": "SendMessage"');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  it('answers requests that are not JSON-RPC requests with -32600, echoing a readable id', async () => {
    const u = await url();
    expect((await post(u, JSON.stringify({ jsonrpc: 'aaa', method: 'SendMessage', id: 4, params: {} }))).json).toMatchObject({ id: 4, error: { code: -32600 } });
    expect((await post(u, JSON.stringify({ jsonrpc: '2.0', id: 'x', params: {} }))).json).toMatchObject({ id: 'x', error: { code: -32600 } });
    expect((await post(u, JSON.stringify({ jsonrpc: '2.0', method: 'SendMessage', id: { bad: 1 }, params: {} }))).json).toMatchObject({ id: null, error: { code: -32600 } });
    expect((await post(u, JSON.stringify([{ jsonrpc: '2.0', method: 'GetTask', id: 1 }]))).json).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it('answers an unknown method with -32601 and a version it does not speak with -32009, echoing the id', async () => {
    const u = await url();
    expect((await post(u, rpc({ id: 'three', method: 'SendMessageXXX', params: {} }))).json).toMatchObject({ id: 'three', error: { code: -32601 } });
    expect((await post(u, sendMessageBody('find', 9), { 'a2a-version': '2.0' })).json).toMatchObject({ id: 9, error: { code: -32009 } });
  });

  it('answers invalid params with -32602 naming the field: no message, empty parts, no role, a negative historyLength', async () => {
    const u = await url();
    const cases: [object, RegExp][] = [
      [{}, /params\.message is required/],
      [{ message: message({ parts: [] }) }, /message\.parts must hold at least one part/],
      [{ message: message({ role: undefined }) }, /message\.role is required/],
      [{ message: message({ parts: 'invalid' }) }, /message\.parts/],
      [{ message: message({}), configuration: { historyLength: -1 } }, /historyLength must be a whole number/],
      [{ '': 'not_a_dict', message: message({}) }, /empty key/],
    ];
    for (const [params, why] of cases) {
      const r = await post(u, rpc({ id: 12, method: 'SendMessage', params }));
      expect(r.json).toMatchObject({ id: 12, error: { code: -32602 } });
      expect(r.json.error.message).toMatch(why);
    }
    expect((await post(u, rpc({ id: 13, method: 'GetTask', params: { id: 'x', historyLength: -1 } }))).json).toMatchObject({ id: 13, error: { code: -32602 } });
  });

  it('refuses push configuration with -32003, since the card declares none', async () => {
    const u = await url();
    const r = await post(u, rpc({ id: 5, method: 'SendMessage', params: { message: message({}), configuration: { taskPushNotificationConfig: { url: 'https://example.com/hook' } } } }));
    expect(r.json).toMatchObject({ id: 5, error: { code: -32003 } });
    expect((await post(u, rpc({ id: 6, method: 'CreateTaskPushNotificationConfig', params: { taskId: 't', url: 'https://example.com/hook' } }))).json).toMatchObject({ id: 6, error: { code: -32003 } });
  });

  it('answers a streaming method that fails with one server-sent event carrying the error', async () => {
    const res = await fetch(await url(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: 'Bearer router-secret' },
      body: rpc({ id: 8, method: 'SubscribeToTask', params: { id: 'no-such-task' } }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await res.text();
    expect(text.startsWith('data: ')).toBe(true);
    expect(JSON.parse(text.slice(6))).toMatchObject({ id: 8, error: { code: -32001, message: expect.stringMatching(/not found/) } });
  });

  it('answers a data part nested 50,000 deep with -32602 naming the depth limit, in both bindings; the server goes on', async () => {
    const u = await url();
    // Spelled as text: the test's own JSON.stringify could not write a value this deep.
    const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    const v1 = await post(u, `{"jsonrpc":"2.0","id":21,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":${deep(50_000)}}]}}}`);
    expect(v1.status).toBe(200);
    expect(v1.json).toMatchObject({ id: 21, error: { code: -32602, message: expect.stringMatching(/nested more than 64 levels deep/) } });
    const legacy = `{"jsonrpc":"2.0","id":22,"method":"message/send","params":{"message":{"kind":"message","messageId":"m2","role":"user","parts":[{"kind":"data","data":${deep(50_000)}}]}}}`;
    const v03 = await post(u, legacy, { 'a2a-version': '0.3' });
    expect(v03.json).toMatchObject({ id: 22, error: { code: -32602, message: expect.stringMatching(/64 levels/) } });
    const fine = await post(u, rpc({ id: 23, method: 'SendMessage', params: { message: message({ parts: [{ data: JSON.parse(deep(50)) }] }) } }));
    expect(fine.json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });
});
