/**
 * A load's messages are checked unless the list is one this process made of messages it checked at
 * append and froze (the in-memory store's own answer): whichever store answers, a list it made up
 * or added to is refused before any model call.
 */
import { describe, expect, it } from 'vitest';
import { InMemorySessionStore, SessionStoreUnavailableError, SymfonicAgent, type Message, type SessionKey } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

/** The in-memory store, but its load adds one message that is not one. */
class AddingStore extends InMemorySessionStore {
  override async load(key: SessionKey, options: { maxMessages: number }): Promise<readonly Message[]> {
    return [...(await super.load(key, options)), { role: 'narrator', content: 'x' } as never];
  }
}

describe('a session load', () => {
  it('from the in-memory store hands back what it kept, and the next turn reads it', async () => {
    const requests: number[] = [];
    const agent = new SymfonicAgent({ name: 'support', modelProvider: scriptedModel((req) => (requests.push(req.messages.length), 'ok')), sessions: new InMemorySessionStore() });
    await agent.run('one', { scope: { tenantId: 'acme', sessionId: 'chat' } });
    await agent.run('two', { scope: { tenantId: 'acme', sessionId: 'chat' } });
    expect(requests[1]! - requests[0]!).toBe(2);
  });

  it('is checked when a store hands back a message it did not keep, even an in-memory store subclass', async () => {
    const agent = new SymfonicAgent({ name: 'support', modelProvider: scriptedModel(['ok', 'ok']), sessions: new AddingStore() });
    const error = await agent.run('one', { scope: { tenantId: 'acme', sessionId: 'chat' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionStoreUnavailableError);
    expect((error as Error).message).toMatch(/answered a load with something that is not a list of messages \(at 0/);
  });
});
