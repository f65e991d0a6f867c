import { SnapshotError } from '../core/errors.js';
import type { DelegationRoster } from '../delegation/roster.js';
import type { SuspendedRun } from '../run/snapshot/run-snapshot.js';
import type { AgentCore } from './agent-core.js';

function childName(args: string): string | undefined {
  try {
    const name = (JSON.parse(args) as { name?: unknown } | null)?.name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks a suspended tree against the agents that are to resume it, before anything runs: each
 * run's waiting turn matches its last message, and each suspended child is still in its
 * delegator's roster (a renamed or removed child, a changed roster, is a tree this agent cannot
 * continue: said, with what changed), and its entry there still goes on from a suspended run.
 * Walked without recursion.
 */
export function checkRoster(core: AgentCore, root: SuspendedRun): void {
  const stack: { run: SuspendedRun; roster: DelegationRoster | undefined; agent: string; remote: boolean }[] = [{ run: root, roster: core.roster, agent: core.name, remote: false }];
  while (stack.length > 0) {
    const { run, roster, agent, remote } = stack.pop()!;
    if (remote !== ('remote' in run.waits) || ('remote' in run.waits && run.waits.remote.agent !== agent)) {
      throw new SnapshotError(
        remote
          ? `the snapshot's run "${run.runId}" of "${agent}" is not the remote task it was: "${agent}" here is a remote child, and the snapshot's run ${'remote' in run.waits ? `names "${run.waits.remote.agent}"` : 'is a local one'}. Resume it with the roster it was written with.`
          : `the snapshot's run "${run.runId}" of "${agent}" waits on a remote task, and "${agent}" here is no remote child: the roster changed since the tree suspended. Resume it with the roster it was written with.`,
      );
    }
    if ('remote' in run.waits) continue;
    const last = run.messages[run.messages.length - 1];
    if (last === undefined) throw new SnapshotError(`run "${run.runId}" has no conversation: the snapshot is not as it was written.`);
    if ('model' in run.waits) {
      if (last.role === 'assistant') throw new SnapshotError(`run "${run.runId}" waits on a model call, but its conversation ends with the model's answer: the snapshot is not as it was written.`);
      continue;
    }
    const states = run.waits.calls;
    const calls = last.role === 'assistant' ? (last.toolCalls ?? []) : [];
    if (calls.length !== states.length || calls.some((c, i) => c.id !== states[i]!.callId)) {
      throw new SnapshotError(`run "${run.runId}" waits on tool calls that are not its last turn's: the snapshot is not as it was written.`);
    }
    states.forEach((state, i) => {
      if (!('child' in state)) return;
      const call = calls[i]!;
      const name = call.name === 'run_agent' ? childName(call.arguments) : undefined;
      const child = name === undefined ? undefined : roster?.child(name);
      if (child === undefined) {
        const have = roster?.names.map((n) => `"${n}"`).join(', ') || 'none';
        throw new SnapshotError(
          `the snapshot's child run "${state.child.runId}" was started by "${agent}" as "${name ?? call.name}", which agent "${agent}" here has no child of ` +
            `(its children: ${have}): the roster changed since the tree suspended. Resume it with the roster it was written with.`,
        );
      }
      // The name alone is not enough: an entry whose door cannot go on from the child's run (now
      // behind a wrapper) would start it afresh, its task run again and the decisions lost.
      if (!child.declares.resumable) {
        throw new SnapshotError(
          `the snapshot's child run "${state.child.runId}" of "${name}" (a child of "${agent}") cannot go on here: "${name}" in agent "${agent}"'s roster is now ` +
            `a child that only starts afresh (a wrapper of your own code or a foreign facade), not a symfonic agent placed directly or a remote child. ` +
            `Resume it with the roster it was written with. Nothing was run.`,
        );
      }
      stack.push({ run: state.child, roster: child.declares.roster, agent: name!, remote: child.declares.remote });
    });
  }
}
