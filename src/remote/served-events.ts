import type { EndedDelegation, RunEmitter, RunEventBody, RunEventSink } from '../run/run-event.js';
import type { RunFrame } from '../run/run-frame.js';

/** One run event of a served tree as it crosses the wire: its run's lineage, the time, and its body. */
export type WireEvent = Readonly<Record<string, unknown>>;

/**
 * The event sink of a served tree that someone streams: each run's events, stamped with its
 * lineage and the time (the caller numbers them in its own order), handed to the task as they
 * happen. A run's terminal event is its last; later ones are dropped.
 */
export class ServedEvents implements RunEventSink {
  constructor(private readonly push: (event: WireEvent) => void) {}

  open(frame: RunFrame, agent: string, resumed: boolean, endedCalls?: readonly EndedDelegation[]): RunEmitter {
    const { runId, rootRunId, parentRunId, depth } = frame;
    let ended = false;
    const emit = (body: RunEventBody) => {
      if (ended) return;
      ended = body.type === 'run.finished' || body.type === 'run.failed' || body.type === 'run.suspended';
      this.push({ runId, rootRunId, parentRunId, agent, depth, timeMs: Date.now(), ...body });
    };
    emit(!resumed ? { type: 'run.started' } : endedCalls !== undefined && endedCalls.length > 0 ? { type: 'run.resumed', delegations: endedCalls } : { type: 'run.resumed' });
    return { emit };
  }
}
