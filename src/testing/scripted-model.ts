import { abortableSleep } from '../core/abort.js';
import { abortErrorFrom, ConfigurationError, SymfonicError } from '../core/errors.js';
import type { Usage } from '../core/usage.js';
import type { ModelOverrides, ModelProvider, ModelRequest, ModelResponse, ToolCall } from '../model/types.js';

/**
 * One scripted model turn: a string is a final answer; an Error is thrown by generate(); an
 * object may carry text, tool calls, usage and a delay that honours the abort signal.
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
    };

export type ScriptedResponder = (request: ModelRequest, index: number) => ScriptedTurn | Promise<ScriptedTurn>;

export interface ScriptedModel extends ModelProvider {
  /** Every request received, in order. */
  readonly calls: ModelRequest[];
  /** Throws if scripted turns are left unused: a test that stops early has not shown what it meant to. */
  assertComplete(): void;
}

/** Ran out of turns, or was given a turn it cannot play. */
export class ScriptError extends SymfonicError {}

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
    text: turn.text ?? '',
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

  const model: ScriptedModel = {
    providerName,
    modelName,
    calls,
    async generate(request: ModelRequest, opts?: { signal?: AbortSignal }): Promise<ModelResponse> {
      const index = calls.length;
      calls.push(request);
      if (opts?.signal?.aborted) throw abortErrorFrom(opts.signal, 'the model call');
      let turn: ScriptedTurn;
      if (isList) {
        if (index >= turns.length) {
          throw new ScriptError(
            `scripted model ran out of turns: it had ${turns.length} and was asked for turn ${index + 1}. ` +
              `Add a turn, or check why the agent made another model call.`,
          );
        }
        turn = turns[index]!;
      } else {
        turn = await (script as ScriptedResponder)(request, index);
      }
      if (turn instanceof Error) throw turn;
      if (typeof turn === 'object' && turn !== null && turn.delayMs !== undefined) await abortableSleep(turn.delayMs, opts?.signal);
      if (typeof turn !== 'string' && (typeof turn !== 'object' || turn === null)) {
        throw new ScriptError(`scripted turn ${index} is ${String(turn)}: use a string, an Error, or { text?, toolCalls?, usage?, delayMs? }.`);
      }
      return toResponse(turn, request.modelName ?? modelName);
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
