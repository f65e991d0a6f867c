/**
 * The names and numbers every layer agrees on, kept in one place so that a default stated in one
 * file can never drift from the one enforced in another.
 */

/**
 * Names of agents, children and tools: what model APIs accept as a tool or function name, and
 * what a model can write back reliably in run_agent's `name`.
 */
export const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export const DEFAULTS = Object.freeze({
  /** Depth 0 is the root; 2 allows parent → child → grandchild. */
  maxAgentDepth: 2,
  /** Model calls a run may make before it must answer. */
  maxTurns: 10,
  /** Children one run may have working at once; the rest queue. */
  maxConcurrentDelegations: 8,
  /** Output tokens reserved (and sent as maxTokens) for a budgeted call whose request sets none. */
  reservedOutputTokens: 4096,
});

/** The longest name from outside (a model's, a request's) that goes into a span, an event, a metric or a message. */
const MAX_SHOWN_NAME = 64;

/**
 * A name as telemetry and messages may show it. Declared names pass NAME_PATTERN already; a name
 * a model invented could be any length, and would otherwise land whole in every span name,
 * attribute, event and message it touched.
 */
export function shownName(name: string): string {
  return name.length <= MAX_SHOWN_NAME ? name : `${name.slice(0, MAX_SHOWN_NAME)}…`;
}
