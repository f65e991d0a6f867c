import { ConfigurationError, SnapshotError } from '../core/errors.js';
import type { Decisions } from '../run/interruption.js';
import { inputDigest } from '../run/snapshot/input-digest.js';
import type { SuspendedRun } from '../run/snapshot/run-snapshot.js';

/** Characters of a decision quoted in an error, at most. */
const PREVIEW_CHARS = 200;

/**
 * A value as an error quotes it: JSON-like, at most three levels and PREVIEW_CHARS characters,
 * so a decision nested 20,000 deep or 20 MB long makes a short message, not a RangeError.
 */
export function preview(value: unknown): string {
  const text = shape(value, 3);
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}… (${text.length} characters)` : text;
}

function shape(value: unknown, depth: number): string {
  if (typeof value === 'string') return JSON.stringify(value.length > PREVIEW_CHARS ? value.slice(0, PREVIEW_CHARS) : value);
  if (typeof value !== 'object' || value === null) return String(value);
  if (depth === 0) return Array.isArray(value) ? '[…]' : '{…}';
  const keys = Object.keys(value).slice(0, 8);
  const more = Object.keys(value).length > keys.length ? ', …' : '';
  const rec = value as Record<string, unknown>;
  if (Array.isArray(value)) return `[${keys.map((k) => shape(rec[k], depth - 1)).join(', ')}${more}]`;
  return `{ ${keys.map((k) => `${JSON.stringify(k.slice(0, 40))}: ${shape(rec[k], depth - 1)}`).join(', ')}${more} }`;
}

/** The digest of each approval the tree waits on, from the call as its run's last turn holds it; walked without recursion. */
function approvalDigests(root: SuspendedRun): Map<string, string> {
  const found = new Map<string, string>();
  const stack: SuspendedRun[] = [root];
  while (stack.length > 0) {
    const run = stack.pop()!;
    if (!('calls' in run.waits)) continue;
    const calls = run.messages[run.messages.length - 1]?.toolCalls ?? [];
    run.waits.calls.forEach((state, i) => {
      if ('child' in state) stack.push(state.child);
      const call = calls[i];
      if ('wait' in state && state.wait.kind === 'approval' && call !== undefined) found.set(state.wait.id, inputDigest(call.name, call.arguments));
    });
  }
  return found;
}

/**
 * Holds each approval to what the approver was shown: a decision's `inputDigest` must be the
 * digest of the call the snapshot would run (a snapshot whose call was changed after the
 * interruption was shown is refused), and, when `required`, every approval carries one. A
 * remote child's approvals are checked by its server, which keeps its calls.
 */
export function checkDigests(root: SuspendedRun, decisions: Decisions, required: boolean): void {
  for (const [id, digest] of approvalDigests(root)) {
    const d = decisions[id]!;
    if (!('approve' in d) || d.approve !== true) continue;
    if (d.inputDigest === undefined) {
      if (!required) continue;
      throw new ConfigurationError(
        `resume: the approval of "${id}" carries no inputDigest, and this agent resumes unsigned snapshots (unsignedSnapshots: true), which anyone who stored one could have changed: ` +
          `approve with { approve: true, inputDigest: interruption.inputDigest }, the digest of the call the approver was shown, or give the agent a snapshotKey. Nothing was run.`,
      );
    }
    if (d.inputDigest !== digest) {
      throw new SnapshotError(
        `the approval of "${id}" was given for another call than the one this snapshot would run: its inputDigest is not the digest of the snapshot's call ` +
          `(the tool or its input was changed after the approver was shown it, or the decision is for another interruption). Nothing was run.`,
      );
    }
  }
}
