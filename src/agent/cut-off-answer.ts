import { SymfonicError } from '../core/errors.js';
import { isCutOff } from '../model/finish-reason.js';
import type { ModelResponse } from '../model/types.js';
import type { RunState } from './run-state.js';

/**
 * The model's output reached its limit while it was writing tool calls: their arguments are cut
 * off, so none of them is run, and the run fails. Asking again with the same limit would most
 * likely be cut at the same place (and a weak model loops on it); the fix is the caller's: a
 * larger maxTokens.
 */
export class ModelOutputTruncatedError extends SymfonicError {
  constructor(
    readonly agent: string,
    readonly finishReason: string,
    readonly toolNames: readonly string[],
    readonly maxTokens: number | undefined,
  ) {
    const limit = maxTokens === undefined ? 'its output limit (the provider\'s default, or the budget\'s reservation bound)' : `maxTokens (${maxTokens})`;
    super(
      `the model of agent "${agent}" stopped at ${limit} (finish reason "${finishReason}") while writing tool call(s) ` +
        `${toolNames.map((n) => `"${n}"`).join(', ')}: their arguments are cut off, so symfonic ran none of them. ` +
        `Raise maxTokens (FrameworkConfig model.maxTokens, a SubAgentSpec's maxTokens, a provider's withOverrides, or ` +
        `TenantBudgets defaultMaxTokens when a budget sets the bound), or ask for shorter arguments.`,
    );
    this.name = 'ModelOutputTruncatedError';
  }
}

/** Refuses an answer whose tool calls were cut off by the output limit, before anything runs. */
export function refuseCutOffCalls(run: RunState, answer: ModelResponse, maxTokens: number | undefined): void {
  if (answer.toolCalls.length === 0 || !isCutOff(answer.finishReason)) return;
  throw new ModelOutputTruncatedError(run.core.name, answer.finishReason, answer.toolCalls.map((c) => c.name), maxTokens);
}
