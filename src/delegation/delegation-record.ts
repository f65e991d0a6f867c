import type { DelegationRecordOf } from '../run/delegation-record.js';
import type { DelegationOutcome } from '../observability/attributes.js';

/** One run_agent call of a run, as it ended (AgentResponse.delegations). */
export type DelegationRecord = DelegationRecordOf<DelegationOutcome>;

/** Where a run's delegation calls land as they end, by tool call id: a resumed call's end replaces its suspension. */
export interface DelegationRecords {
  set(toolCallId: string, record: DelegationRecord): void;
}
