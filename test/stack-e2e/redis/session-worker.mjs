// A second process of the Redis session tests: it runs one turn of a conversation another
// process began, from the built package, against the same Redis and prefix, and reports what
// its model was sent. Configuration arrives in the first message.
import { RedisSessionStore, SymfonicAgent } from '../../../dist/index.js';
import { scriptedModel } from '../../../dist/testing/index.js';

process.once('message', async ({ url, keyPrefix, scope, query }) => {
  const store = new RedisSessionStore({ url, keyPrefix });
  try {
    const model = scriptedModel(['from the second process']);
    const agent = new SymfonicAgent({ name: 'support', modelProvider: model, sessions: store });
    const response = await agent.run(query, { scope });
    process.send({ type: 'result', result: { sent: model.calls[0].messages, rootRunId: response.rootRunId } });
  } catch (error) {
    process.send({ type: 'error', error: String(error?.stack ?? error) });
  } finally {
    await store.close();
  }
});
