import { abortableSleep } from '../core/signals.js';
import { ConfigurationError } from '../core/errors.js';
import { TestKitError } from './test-kit-error.js';
import { isPromise } from '../core/promise.js';
import type { Usage } from '../core/usage.js';
import type { ModelOverrides, ModelProvider, ModelRequest, ModelResponse, ModelStreamChunk, ToolCall } from '../model/types.js';

/**
 * One scripted model turn: a string is a final answer; an Error is thrown by generate() (and by
 * stream(), on the first read); an object may carry text, tool calls, usage and a delay that
 * honours the abort signal.
 *
 * Streaming: `stream()` plays the same turns. `delayMs` passes before the first chunk (the time to
 * first token). `chunks` are the pieces the text streams in (their concatenation is the text, so
 * `text` may be left out; given both, they must agree), and `chunkDelayMs` passes before each
 * piece after the first, cut short by an abort. A turn without `chunks` streams its text as one
 * piece. Every stream ends with one `done` chunk holding the response generate() would return;
 * generate() itself ignores `chunkDelayMs`.
 */
export type ScriptedTurn =
  | string
  | Error
  | {
      text?: string;
      toolCalls?: { name: string; arguments: unknown; id?: string }[];
      usage?: Partial<Usage>;
      delayMs?: number;
      finishReason?: string;
      chunks?: string[];
      chunkDelayMs?: number;
    };

type ObjectTurn = Exclude<ScriptedTurn, string | Error>;

/** A call's options, kept whole: its signal is read only when a delay waits on it. */
type CallOptions = { signal?: AbortSignal } | undefined;

export type ScriptedResponder = (request: ModelRequest, index: number) => ScriptedTurn | Promise<ScriptedTurn>;

export interface ScriptedModel extends ModelProvider {
  /** Always present on a scripted model: every turn can be streamed. */
  stream(request: ModelRequest, options?: { signal?: AbortSignal }): AsyncIterable<ModelStreamChunk>;
  /** Every request received, by generate() and stream() alike, in order. */
  readonly calls: ModelRequest[];
  /** Throws if scripted turns are left unused: a test that stops early has not shown what it meant to. */
  assertComplete(): void;
}

/** Ran out of turns, or was given a turn it cannot play. */
/**
 * A script that cannot go on: out of turns, a malformed turn, a responder that threw. A fault of
 * the test's own making, so it fails the root run rather than becoming a message a parent's
 * model reads and answers around: a broken test must not pass.
 */
export class ScriptError extends TestKitError {}

let nextCallId = 0;

function toResponse(turn: Exclude<ScriptedTurn, Error>, modelName: string): ModelResponse {
  if (typeof turn === 'string') {
    return { text: turn, toolCalls: [], finishReason: 'stop', responseModel: modelName };
  }
  const toolCalls: ToolCall[] = (turn.toolCalls ?? []).map((c) => ({
    id: c.id ?? `call_${++nextCallId}`,
    name: c.name,
    arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}),
  }));
  const response: ModelResponse = {
    text: turn.text ?? turn.chunks?.join('') ?? '',
    toolCalls,
    finishReason: turn.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    responseModel: modelName,
  };
  if (turn.usage) {
    response.usage = {
      inputTokens: turn.usage.inputTokens ?? 0,
      outputTokens: turn.usage.outputTokens ?? 0,
      source: turn.usage.source ?? 'reported',
      ...(turn.usage.cacheReadInputTokens !== undefined ? { cacheReadInputTokens: turn.usage.cacheReadInputTokens } : {}),
    };
  }
  return response;
}

/**
 * A ModelProvider that plays a script: a list of turns, or a responder called with each request
 * and its 0-based index. It records every request, for assertions on what the agent sent.
 */
export function scriptedModel(
  script: readonly ScriptedTurn[] | ScriptedResponder,
  options: { providerName?: string; modelName?: string } = {},
): ScriptedModel {
  const isList = Array.isArray(script);
  if (!isList && typeof script !== 'function') {
    throw new ConfigurationError('scriptedModel needs an array of turns or a responder function (request, index) => turn.');
  }
  const turns = isList ? [...(script as readonly ScriptedTurn[])] : [];
  const calls: ModelRequest[] = [];
  const providerName = options.providerName ?? 'scripted';
  const modelName = options.modelName ?? 'scripted-model';

  /** A turn the script may hold: a string, or an object whose chunks add up. */
  const checked = (turn: ScriptedTurn, index: number): ObjectTurn | string => {
    if (typeof turn !== 'string' && (typeof turn !== 'object' || turn === null)) {
      throw new ScriptError(
        `scripted turn ${index} is ${String(turn)}: use a string, an Error, or { text?, toolCalls?, usage?, delayMs?, chunks?, chunkDelayMs? }.`,
      );
    }
    if (typeof turn === 'object') checkChunks(turn as ObjectTurn, index);
    return turn as ObjectTurn | string;
  };

  /** A turn checked and, when it asks for one, after its delay; an Error turn is thrown. */
  const settle = (turn: ScriptedTurn, index: number, opts: CallOptions): ObjectTurn | string | Promise<ObjectTurn | string> => {
    if (turn instanceof Error) throw turn;
    if (typeof turn === 'object' && turn !== null && turn.delayMs !== undefined) {
      return abortableSleep(turn.delayMs, opts?.signal).then(() => checked(turn, index));
    }
    return checked(turn, index);
  };

  /**
   * Finds the call's turn; shared by generate() and stream(), so both use up the script alike.
   * Synchronous when the script is a list and the turn has no delay: a scripted call costs no
   * more promises than a real provider's, which keeps benchmarks on it honest. The signal is
   * read only by a delay, the one wait a scripted call has: symfonic itself stops a call whose
   * run aborts, and a run's signal is made on its first read.
   */
  const play = (request: ModelRequest, index: number, opts: CallOptions): ObjectTurn | string | Promise<ObjectTurn | string> => {
    if (isList) {
      if (index >= turns.length) {
        throw new ScriptError(
          `scripted model ran out of turns: it had ${turns.length} and was asked for turn ${index + 1}. ` +
            `Add a turn, or check why the agent made another model call.`,
        );
      }
      return settle(turns[index]!, index, opts);
    }
    // A responder returns an Error to script a failed call; one that throws is a bug in the test.
    const threw = (error: unknown): never => {
      throw new ScriptError(`the scripted model's responder threw on call ${index + 1}: ${(error as Error)?.message ?? String(error)}`, { cause: error });
    };
    let out: ScriptedTurn | Promise<ScriptedTurn>;
    try {
      out = (script as ScriptedResponder)(request, index);
    } catch (error) {
      return threw(error);
    }
    return isPromise(out) ? Promise.resolve(out).then((t) => settle(t, index, opts), threw) : settle(out, index, opts);
  };

  const model: ScriptedModel = {
    providerName,
    modelName,
    calls,
    generate(request: ModelRequest, opts?: { signal?: AbortSignal }): Promise<ModelResponse> {
      const index = calls.length;
      calls.push(request);
      const name = request.modelName ?? modelName;
      try {
        const turn = play(request, index, opts);
        return isPromise(turn) ? turn.then((t) => toResponse(t, name)) : Promise.resolve(toResponse(turn, name));
      } catch (error) {
        return Promise.reject(error);
      }
    },
    stream(request: ModelRequest, opts?: { signal?: AbortSignal }): AsyncIterable<ModelStreamChunk> {
      // Recorded at the call, as generate() records it, not on the first read.
      const index = calls.length;
      calls.push(request);
      return streamTurn(() => play(request, index, opts), request.modelName ?? modelName, opts);
    },
    assertComplete(): void {
      if (isList && calls.length < turns.length) {
        throw new ScriptError(`scripted model has ${turns.length - calls.length} unused turn(s) of ${turns.length}: the agent made ${calls.length} model call(s).`);
      }
    },
    withOverrides(o: ModelOverrides): ModelProvider {
      return o.modelName !== undefined && o.modelName !== modelName ? { ...model, modelName: o.modelName } : model;
    },
  };
  return model;
}

/**
 * One scripted turn as a stream: its text in pieces (the turn's chunks, else the whole text),
 * then the full response. An iterator by hand, each read one promise (none of an async function's
 * own or its awaits'): a generator costs several promises a step, and agents' streaming
 * benchmarks run on this model, so its reads cost what a provider's already-buffered pieces do.
 */
function streamTurn(play: () => ObjectTurn | string | Promise<ObjectTurn | string>, modelName: string, opts: CallOptions): AsyncIterable<ModelStreamChunk> {
  let pieces: readonly string[] | undefined;
  let response: ModelResponse;
  let gapMs = 0;
  let next = 0;
  let finished = false;
  const begin = (turn: ObjectTurn | string): void => {
    response = toResponse(turn, modelName);
    pieces = (typeof turn === 'object' && turn.chunks !== undefined ? turn.chunks : [response.text]).filter((p) => p !== '');
    gapMs = typeof turn === 'object' ? (turn.chunkDelayMs ?? 0) : 0;
  };
  /** The next piece, once any pause before it is over. */
  const piece = (): IteratorResult<ModelStreamChunk> => {
    if (next < pieces!.length) return { value: { type: 'text', delta: pieces![next++]! }, done: false };
    finished = true;
    return { value: { type: 'done', response }, done: false };
  };
  const afterPause = (): Promise<IteratorResult<ModelStreamChunk>> =>
    next > 0 && next < pieces!.length && gapMs > 0 ? abortableSleep(gapMs, opts?.signal).then(piece) : Promise.resolve(piece());
  const step = (): Promise<IteratorResult<ModelStreamChunk>> => {
    try {
      if (finished) return Promise.resolve({ value: undefined, done: true });
      if (pieces === undefined) {
        const turn = play();
        if (isPromise(turn)) {
          return Promise.resolve(turn).then((t) => {
            begin(t);
            return afterPause();
          });
        }
        begin(turn);
      }
      return afterPause();
    } catch (error) {
      return Promise.reject(error);
    }
  };
  const iterator: AsyncIterator<ModelStreamChunk> = {
    next: step,
    return: () => {
      finished = true;
      return Promise.resolve({ value: undefined, done: true });
    },
  };
  return { [Symbol.asyncIterator]: () => iterator };
}

function checkChunks(turn: ObjectTurn, index: number): void {
  if (turn.chunks === undefined) return;
  if (!Array.isArray(turn.chunks) || !turn.chunks.every((c) => typeof c === 'string')) {
    throw new ScriptError(`scripted turn ${index}: chunks must be an array of strings, the pieces the text streams in.`);
  }
  if (turn.text !== undefined && turn.text !== turn.chunks.join('')) {
    throw new ScriptError(
      `scripted turn ${index}: text ${JSON.stringify(turn.text)} is not the chunks joined (${JSON.stringify(turn.chunks.join(''))}). ` +
        `Give chunks alone, or make them add up to the text.`,
    );
  }
  if (turn.chunkDelayMs !== undefined && !(Number.isFinite(turn.chunkDelayMs) && turn.chunkDelayMs >= 0)) {
    throw new ScriptError(`scripted turn ${index}: chunkDelayMs must be a number of milliseconds, 0 or more.`);
  }
}
