import { ROOT_CONTEXT, propagation, type Context, type TextMapPropagator } from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';
import type { RunOptions } from '../agent/run-options.js';
import type { Principal } from './principal.js';
import { ID_RULE, isId, sameIdProblem } from '../run/ids.js';
import { BAGGAGE, depthFromWire, MAX_WIRE_DEPTH } from './wire.js';

/** A served run's options, or why the request cannot start one (400 malformed, 403 tenant). */
export type ServedFrame =
  | { ok: true; options: Omit<RunOptions, 'signal'> }
  | { ok: false; status: 400 | 403; message: string };

const headerGetter = {
  keys: (carrier: IncomingHttpHeaders) => Object.keys(carrier),
  get: (carrier: IncomingHttpHeaders, key: string) => carrier[key.toLowerCase()],
};

class Refused {
  constructor(
    readonly status: 400 | 403,
    readonly message: string,
  ) {}
}

function wholeNumber(name: string, raw: string | undefined, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(n) || n < 0 || n > max) throw new Refused(400, `baggage ${name} must be a whole number from 0 to ${max} (got ${JSON.stringify(raw)})`);
  return n;
}

function wireId(name: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!isId(raw)) throw new Refused(400, `baggage ${name} must be ${ID_RULE}`);
  return raw;
}

/**
 * The tenant a served run acts for. Baggage only names a tenant; the principal must hold it.
 * Without a name, a principal with exactly one tenant acts for it; more would be a guess.
 */
function tenantFor(principal: Principal, named: string | undefined): string {
  if (named !== undefined) {
    if (!principal.tenants.includes(named)) throw new Refused(403, `principal "${principal.principal}" may not act for tenant "${named}"`);
    return named;
  }
  if (principal.tenants.length === 1) return principal.tenants[0]!;
  throw new Refused(
    403,
    principal.tenants.length === 0
      ? `principal "${principal.principal}" holds no tenant to act for`
      : `principal "${principal.principal}" holds several tenants; name one in baggage ${BAGGAGE.tenantId}`,
  );
}

/**
 * The one translation from a request's W3C headers to a served run's options. The trace context
 * always joins; with the usage-lineage extension active, the baggage places the run. The served run is
 * a child of the caller's run: its span under the caller's execute_tool span, its parent the
 * caller's run, its depth one more, its ceiling the caller's (which the agent's own only
 * tightens, in the run itself), its deadline the caller's.
 */
export function servedFrame(propagator: TextMapPropagator, headers: IncomingHttpHeaders, principal: Principal, lineage: boolean): ServedFrame {
  const parentContext: Context = propagator.extract(ROOT_CONTEXT, headers, headerGetter);
  // symfonic's baggage entries belong to the usage-lineage extension: read only when the request activates it.
  const bag = lineage ? propagation.getBaggage(parentContext) : undefined;
  const entry = (key: string): string | undefined => bag?.getEntry(key)?.value;
  try {
    const scope = { tenantId: tenantFor(principal, entry(BAGGAGE.tenantId)) };
    const parentRunId = wireId(BAGGAGE.parentRunId, entry(BAGGAGE.parentRunId));
    const rootRunId = wireId(BAGGAGE.rootRunId, entry(BAGGAGE.rootRunId));
    const callerDepth = wholeNumber(BAGGAGE.agentDepth, entry(BAGGAGE.agentDepth), MAX_WIRE_DEPTH);
    const maxAgentDepth = wholeNumber(BAGGAGE.maxAgentDepth, entry(BAGGAGE.maxAgentDepth), MAX_WIRE_DEPTH);
    const deadline = wholeNumber(BAGGAGE.deadline, entry(BAGGAGE.deadline), Number.MAX_SAFE_INTEGER);
    let runId = wireId(BAGGAGE.runId, entry(BAGGAGE.runId));
    const same = sameIdProblem(runId, parentRunId, `baggage ${BAGGAGE.runId} and ${BAGGAGE.parentRunId}`);
    if (same !== undefined) throw new Refused(400, `${same}: send the run id minted for the served run, or none`);
    const options: Omit<RunOptions, 'signal'> = { scope, parentContext };
    if (parentRunId !== undefined) {
      if (rootRunId === undefined || callerDepth === undefined) {
        throw new Refused(400, `baggage ${BAGGAGE.parentRunId} needs ${BAGGAGE.rootRunId} and ${BAGGAGE.agentDepth} beside it to place the run in its tree`);
      }
      options.parentRunId = parentRunId;
      options.rootRunId = rootRunId;
      options.agentDepth = depthFromWire(callerDepth);
    } else {
      // A caller outside any symfonic tree: the served run is a root of its own.
      runId = undefined;
    }
    if (runId !== undefined) options.runId = runId;
    if (maxAgentDepth !== undefined) options.maxAgentDepth = maxAgentDepth;
    // The run keeps the caller's deadline in its frame (its own children inherit it) and stops at it.
    if (deadline !== undefined) {
      if (deadline === 0) throw new Refused(400, `baggage ${BAGGAGE.deadline} must be a time in epoch milliseconds`);
      options.deadline = deadline;
    }
    return { ok: true, options };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, status: error.status, message: error.message };
    throw error;
  }
}
