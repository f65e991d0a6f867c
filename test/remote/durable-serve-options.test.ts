/**
 * serveAgent over a symfonic/durable runtime (issue 32): the runtime is told from an agent by the
 * brand it declares, must be given a task store the fleet shares, and which of its agents is
 * served must be named when it has several. Each refusal names the fix; nothing starts listening.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, ConfigurationError, SymfonicAgent } from '../../src/index.js';
import type { Durable } from '../../src/durable/index.js';
import { InMemoryTaskStore, RedisTaskStore, serveAgent } from '../../src/remote/index.js';
import type { DurableTrees } from '../../src/remote/durable-trees.js';
import { scriptedModel } from '../../src/testing/index.js';
import { bearer } from './helpers.js';

// The durable runtime is a DurableTrees: checked by the compiler, not by probing its methods.
const servable = (durable: Durable): DurableTrees => durable;
void servable;

const agent = (name: string) => new SymfonicAgent({ name, modelProvider: scriptedModel(['x']) });
const notCalled = () => Promise.reject(new Error('a validation test runs no tree'));

/** A runtime's declared shape with the agents given; its trees are never run here. */
function runtime(agents: (SymfonicAgent | Agent)[]): DurableTrees {
  return { kind: 'symfonic/durable', agents: new Map(agents.map((a) => [a.name, a])), run: notCalled, result: notCalled, resume: notCalled, recover: notCalled, cancel: notCalled };
}

const stores: RedisTaskStore[] = [];
const redisStore = () => {
  // Connects on first use only: these tests never reach Redis.
  const s = new RedisTaskStore({ url: 'redis://127.0.0.1:1' });
  stores.push(s);
  return s;
};
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

describe('serveAgent(durable, options)', () => {
  it('refuses a durable runtime without a task store the fleet shares, naming RedisTaskStore', async () => {
    const durable = runtime([agent('planner')]);
    await expect(serveAgent(durable, { authenticate: bearer() })).rejects.toThrow(/needs tasks: a RedisTaskStore every replica shares.*none was given.*new RedisTaskStore/);
    await expect(serveAgent(durable, { authenticate: bearer(), tasks: new InMemoryTaskStore() })).rejects.toThrow(/needs tasks: a RedisTaskStore.*InMemoryTaskStore is this process's alone/);
  });

  it('asks which agent to serve when the runtime has several, and refuses one it does not have', async () => {
    const durable = runtime([agent('planner'), agent('desk')]);
    const refused = serveAgent(durable, { authenticate: bearer(), tasks: redisStore() });
    await expect(refused).rejects.toThrow(ConfigurationError);
    await expect(refused).rejects.toThrow(/runs trees of "planner", "desk"; name the one to serve with agent/);
    await expect(serveAgent(durable, { authenticate: bearer(), tasks: redisStore(), agent: 'clerk' })).rejects.toThrow(/agent "clerk" is not one of this durable runtime's agents \("planner", "desk"\)/);
  });

  it('refuses an Agent facade as the served agent, and agent given with a SymfonicAgent', async () => {
    const facade = new Agent({ name: 'front', modelProvider: scriptedModel(['x']) });
    await expect(serveAgent(runtime([facade]), { authenticate: bearer(), tasks: redisStore() })).rejects.toThrow(/"front" is an Agent facade; serve a SymfonicAgent/);
    await expect(serveAgent(agent('a'), { authenticate: bearer(), agent: 'a' })).rejects.toThrow(/a SymfonicAgent is served as it is: drop agent \("a"\)/);
    await expect(serveAgent(runtime([agent('planner')]), { authenticate: bearer(), tasks: redisStore(), agnt: 'planner' } as never)).rejects.toThrow(/serveAgent options: unknown option\(s\) "agnt"\. Allowed: .*\bagent\b/);
  });

  it('takes a runtime by its declared brand only: an object with the same methods and no brand is refused', async () => {
    const { kind: _kind, ...unbranded } = runtime([agent('planner')]);
    await expect(serveAgent(unbranded as never, { authenticate: bearer(), tasks: redisStore() })).rejects.toThrow(/serves a SymfonicAgent or a symfonic\/durable runtime/);
  });

  it('serves the named agent of the runtime: its card is that agent', async () => {
    const server = await serveAgent(runtime([agent('planner'), agent('desk')]), { authenticate: bearer(), tasks: redisStore(), agent: 'desk' });
    try {
      const card = (await (await fetch(`${server.url}/.well-known/agent-card.json`)).json()) as { name: string };
      expect(card.name).toBe('desk');
    } finally {
      await server.close();
    }
  });
});
