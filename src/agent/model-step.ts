import { BudgetExceededError, type BudgetRefusal } from '../core/errors.js';
import type { Usage } from '../core/usage.js';
import type { ModelResponse } from '../model/types.js';
import type { ModelStep, Recorded, RunDriver, StepKey } from '../run/run-driver.js';
import { BudgetPause, makeModelCall, ModelCallInFlight } from './model-turn.js';
import { noteStep, stepSpan } from './run-replay.js';
import type { RunState } from './run-state.js';

/**
 * A model call of a driven run, as one recorded step. The step's body is the call as always
 * (reserve, call, settle, in its chat span), so store writes, spans and events happen only when
 * the call is really made. Made or read back, the loop goes on from the step's result; read back,
 * its usage and cost roll into the run's figures, and no store or counter sees them again.
 */
export function drivenModelCall(run: RunState, driver: RunDriver): Promise<ModelResponse | BudgetPause> {
  const key: StepKey = { runId: run.frame.runId, turn: run.turns + 1, index: 0, kind: 'model', name: run.requestModel };
  return driver.model(key, () => recordedCall(run)).then((recorded) => fromStep(run, recorded));
}

/** A call that keeps what it was charged, for the step's record. */
class RecordedModelCall extends ModelCallInFlight {
  usage: Usage | undefined;
  costUsd: number | null = null;

  protected override charged(usage: Usage, costUsd: number | null): void {
    this.usage = usage;
    this.costUsd = costUsd;
  }
}

function recordedCall(run: RunState): Promise<ModelStep> {
  const call = new RecordedModelCall(run);
  return makeModelCall(run, call).then((answer): ModelStep => {
    const span = stepSpan(run, call.chat);
    if (answer instanceof BudgetPause) return { refusal: refusalOf(answer.error), span };
    return { response: answer, usage: call.usage!, costUsd: call.costUsd, span };
  });
}

function fromStep(run: RunState, recorded: Recorded<ModelStep>): ModelResponse | BudgetPause {
  noteStep(run, recorded);
  const step = recorded.value;
  if ('refusal' in step) return new BudgetPause(new BudgetExceededError(step.refusal));
  if (recorded.replayed) run.account.replayCall(step.usage, step.costUsd);
  return step.response;
}

function refusalOf(e: BudgetExceededError): BudgetRefusal {
  return { tenantId: e.tenantId, limitName: e.limitName, limit: e.limit, spent: e.spent, reserved: e.reserved, requested: e.requested };
}
