/**
 * What went over the wire between symfonic and llama-server: a `fetch` (the providers' public
 * `fetch` option, and @ai-sdk/openai's) that passes every call through and keeps a copy of the
 * request body and of the server's answer, so a test compares symfonic's figures with the
 * server's own rather than with figures symfonic computed.
 */
export interface Exchange {
  /** The address called: chat completions, or the server's `/props` (openAICompatible's tool-support check). */
  url: string;
  request: Record<string, unknown>;
  status: number;
  /** The JSON answer of a plain call. */
  json?: Record<string, unknown>;
  /** The `data:` payloads of a streamed call, parsed, without the final [DONE]. */
  chunks?: Record<string, unknown>[];
  /** The raw answer text. */
  text: string;
  /** Settles once the copy of the answer has been read to its end. */
  read: Promise<void>;
}

export interface ServerUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface WireRecorder {
  readonly fetch: typeof fetch;
  readonly exchanges: Exchange[];
  /** Waits until every answer so far has been read to its end. */
  settled(): Promise<void>;
  /** The usage the server reported for one exchange: the JSON's, or the last chunk's. */
  usageOf(exchange: Exchange): ServerUsage;
}

function parseSse(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim())
    .filter((data) => data !== '[DONE]')
    .map((data) => JSON.parse(data) as Record<string, unknown>);
}

/**
 * `inner` is what the recorder passes each call on to (the global fetch unless given), so a test
 * can record what symfonic sent before a user's own fetch wrapper changes it.
 */
export function wireRecorder(inner: typeof fetch = fetch): WireRecorder {
  const exchanges: Exchange[] = [];
  const recording: typeof fetch = async (input, init) => {
    const request = typeof init?.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : {};
    const response = await inner(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const exchange: Exchange = { url, request, status: response.status, text: '', read: Promise.resolve() };
    exchanges.push(exchange);
    // The copy is read beside the caller's; a read cut by an abort leaves what arrived.
    exchange.read = response
      .clone()
      .text()
      .then(
        (text) => {
          exchange.text = text;
          if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) exchange.chunks = parseSse(text);
          else if (response.ok) exchange.json = JSON.parse(text) as Record<string, unknown>;
        },
        () => undefined,
      );
    return response;
  };
  return {
    fetch: recording,
    exchanges,
    settled: async () => void (await Promise.all(exchanges.map((e) => e.read))),
    usageOf(exchange) {
      const source = exchange.json ?? exchange.chunks?.at(-1);
      const usage = source?.['usage'] as ServerUsage | undefined;
      if (!usage) throw new Error(`the server reported no usage in ${exchange.text.slice(0, 500)}`);
      return usage;
    },
  };
}

/** The sum of the server's usage over exchanges, in symfonic's Usage field names. */
export function serverTotals(wire: WireRecorder, exchanges = wire.exchanges): { inputTokens: number; outputTokens: number } {
  return exchanges.reduce(
    (t, e) => {
      const u = wire.usageOf(e);
      return { inputTokens: t.inputTokens + u.prompt_tokens, outputTokens: t.outputTokens + u.completion_tokens };
    },
    { inputTokens: 0, outputTokens: 0 },
  );
}

/** The Chat Completions calls among the exchanges, without the tool-support check's GET /props. */
export function chatCalls(wire: WireRecorder): Exchange[] {
  return wire.exchanges.filter((e) => e.url.endsWith('/chat/completions'));
}
