/**
 * Implemented by children whose door goes on from a suspended run when the placement carries one
 * (`Placement.resume`): symfonic agents, and a facade around one. Any other child (a wrapper of the
 * user's code, a remote agent, a foreign facade) can only start on its task afresh: resumed there,
 * a suspended child would run its task again under its old run id, its first calls made and
 * charged twice and the decisions for its tree dropped. So resume asks before anything runs.
 */
export const RESUMES_SUSPENDED: unique symbol = Symbol('symfonic.resumesSuspended');

export interface ResumableChild {
  [RESUMES_SUSPENDED](): boolean;
}

/** Whether a roster entry's agent goes on from a suspended run of its own. */
export function resumesSuspended(agent: unknown): boolean {
  const says = (agent as Partial<ResumableChild> | null)?.[RESUMES_SUSPENDED];
  return typeof says === 'function' && says.call(agent) === true;
}
