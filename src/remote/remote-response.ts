import type { Receipt } from '../run/run-outcome.js';
import type { Usage } from '../core/usage.js';
import type { ChildResponse } from '../delegation/child.js';

/** What a remote child answers: a ChildResponse, plus the store the remote side charged. */
export interface RemoteChildResponse extends ChildResponse {
  finalResponse: string;
  totalUsage: Usage;
  totalCostUsd: number | null;
  /** The remote's receipt (its ledger, budget store and tenant), when it is a symfonic agent. */
  accounting?: Receipt;
  output?: unknown;
}
