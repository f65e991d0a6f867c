/**
 * The remote child's start at delegation's child door (delegation/child-door.ts): the frame in,
 * the outcome out, or a RunFailure carrying what the remote spent. A remote task that asks for
 * input suspends the child (its task kept by the server, where the decisions go at resume).
 */
import { SnapshotError } from '../core/errors.js';
import type { RunFrame } from '../run/run-frame.js';
import { RunFailure } from '../run/run-outcome.js';
import { foreignSpent } from '../delegation/child-answer.js';
import type { ChildOutcome, Placement } from '../delegation/framed-child.js';
import type { SuspendedRun } from '../run/snapshot/run-snapshot.js';
import { RemotePaused, type RemoteResume } from './remote-pause.js';
import type { RemoteChildResponse } from './remote-response.js';

/** The calling side of a remote child, as the door uses it. */
interface RemoteCaller {
  readonly name: string;
  call(task: string, frame: RunFrame, resume?: RemoteResume, remembers?: boolean): Promise<RemoteChildResponse | RemotePaused>;
}

/**
 * The child run as its delegator's snapshot keeps it: no conversation (the server keeps it), the
 * spend taken in so far (what a resume's spend is measured from), and the task to resume.
 */
function suspendedRemote(runId: string, paused: RemotePaused): SuspendedRun {
  const total = paused.spend.totalUsage;
  const cost = paused.spend.totalCostUsd;
  return { runId, messages: [], turns: 0, figures: { own: total, total, costUsd: cost, totalCostUsd: cost }, delegatedTo: [], waits: { remote: paused.wait } };
}

/**
 * Runs the call in the placement's frame. A failure after the remote had the request already
 * rejects as a RunFailure with the remote's spend (reported, else estimated: remote-call.ts); a
 * failure before it (unreachable, refused at the door) spent nothing, and rejects as itself.
 */
export async function runInPlacement(child: RemoteCaller, task: string, placement: Placement): Promise<ChildOutcome> {
  const runId = placement.frame.runId;
  let resume: RemoteResume | undefined;
  if (placement.resume !== undefined) {
    const waits = placement.resume.run.waits;
    if (!('remote' in waits)) {
      throw new RunFailure(new SnapshotError(`remote agent "${child.name}" can go on only from the remote task it paused on, and the snapshot holds a local run for it.`), foreignSpent(runId, task, ''));
    }
    resume = { wait: waits.remote, decisions: placement.resume.decisions };
  }
  const r = await child.call(task, placement.frame, resume, placement.session?.remembers === true);
  if (r instanceof RemotePaused) {
    return { runId, finalResponse: '', totalUsage: r.spend.totalUsage, totalCostUsd: r.spend.totalCostUsd, accounting: r.spend.receipt, status: 'suspended', interruptions: r.interruptions, suspension: suspendedRemote(runId, r) };
  }
  return { runId, finalResponse: r.finalResponse, totalUsage: r.totalUsage, totalCostUsd: r.totalCostUsd, accounting: r.accounting };
}
