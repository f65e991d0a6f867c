import { SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer, type TracerProvider } from '@opentelemetry/api';
import { shownName } from '../core/defaults.js';
import { modelVisibleText } from '../core/redact.js';
import type { RunFrame } from '../run/run-frame.js';
import { spanLineage } from '../run/run-projections.js';
import type { RunFigures } from '../accounting/accounting.js';
import { ATTR, MAX_DESCRIPTION_CHARS, OPERATION, TRACER_NAME } from '../observability/attributes.js';
import { SYMFONIC_VERSION } from '../observability/version.js';
import type { ModelServer } from '../model/types.js';
import type { SpanLink } from '../run/snapshot/run-snapshot.js';
import type { AgentCore } from './agent-core.js';

type Attributes = Record<string, string | number>;

/** The attributes of an agent's spans that are the same for every run of it: built once, at construction. */
export interface AgentSpanAttributes {
  readonly invoke: Attributes;
  readonly chat: Attributes;
}

const TOOL_ATTRIBUTES: Attributes = Object.freeze({ [ATTR.operationName]: OPERATION.executeTool, [ATTR.toolType]: 'function' });

/** What an agent's spans say about it and its model: the same for every run, so built once. */
export interface AgentSpanFacts {
  name: string;
  description: string | undefined;
  providerName: string;
  server: ModelServer | undefined;
  requestModel: string;
  settings: { temperature?: number | undefined; maxTokens?: number | undefined };
}

export function agentSpanAttributes(facts: AgentSpanFacts): AgentSpanAttributes {
  const { name, providerName, requestModel, settings, server } = facts;
  const chat: Attributes = { [ATTR.operationName]: OPERATION.chat, [ATTR.providerName]: providerName, [ATTR.requestModel]: requestModel };
  if (settings.temperature !== undefined) chat[ATTR.requestTemperature] = settings.temperature;
  if (settings.maxTokens !== undefined) chat[ATTR.requestMaxTokens] = settings.maxTokens;
  // Read defensively: `server` is optional on a provider of the user's own making.
  if (typeof server?.address === 'string' && server.address !== '') {
    chat[ATTR.serverAddress] = server.address;
    if (Number.isInteger(server.port)) chat[ATTR.serverPort] = server.port!;
  }
  const invoke: Attributes = { [ATTR.operationName]: OPERATION.invokeAgent, [ATTR.agentName]: name, [ATTR.agentId]: name, [ATTR.providerName]: providerName, [ATTR.requestModel]: requestModel };
  if (facts.description !== undefined && facts.description !== '') invoke[ATTR.agentDescription] = telemetryDescription(facts.description);
  return Object.freeze({ invoke: Object.freeze(invoke), chat: Object.freeze(chat) });
}

/** A description as a span carries it: whole up to MAX_DESCRIPTION_CHARS, then cut. */
export function telemetryDescription(text: string): string {
  return text.length <= MAX_DESCRIPTION_CHARS ? text : `${text.slice(0, MAX_DESCRIPTION_CHARS)}…`;
}

/**
 * What a run's chat and tool spans carry: its lineage (built once a run) and its agent's
 * constant attributes (built once an agent), set in two calls rather than merged into new
 * objects for every run.
 */
export class SpanAttributeSets {
  constructor(
    readonly lineage: Attributes,
    private readonly agent: AgentSpanAttributes,
  ) {}

  stampChat(span: Span): void {
    span.setAttributes(this.lineage);
    span.setAttributes(this.agent.chat);
  }

  stampTool(span: Span): void {
    span.setAttributes(this.lineage);
    span.setAttributes(TOOL_ATTRIBUTES);
  }
}

/** The tracer last handed out, with the global provider and the provider behind its proxy it came from. */
let lastTracer: { provider: TracerProvider; delegate: unknown; tracer: Tracer } | undefined;

/**
 * Symfonic's tracer from the global provider, asked again only when that provider, or the SDK
 * provider its proxy delegates to, is another object than last time (an SDK registered, or
 * `trace.disable()`): asking on every span built the SDK's lookup key and searched its map twice,
 * three times a hop. A provider that is no proxy is asked every time, as before.
 */
export function tracer(): Tracer {
  const provider = trace.getTracerProvider();
  const delegate = (provider as { getDelegate?: () => unknown }).getDelegate?.();
  const last = lastTracer;
  if (last !== undefined && delegate !== undefined && last.provider === provider && last.delegate === delegate) return last.tracer;
  const fresh = provider.getTracer(TRACER_NAME, SYMFONIC_VERSION);
  lastTracer = { provider, delegate, tracer: fresh };
  return fresh;
}

const INVOKE = Object.freeze({ kind: SpanKind.INTERNAL });

/** Starts `invoke_agent {agent}` in the frame's trace context and stamps it; the shared sets come back when recording. */
export function startRunSpan(core: AgentCore, frame: RunFrame, suspended?: SpanLink): { span: Span; sets: SpanAttributeSets | undefined } {
  // A resumed run's span links to the span it suspended in: one run, two stretches of time.
  const options = suspended === undefined ? INVOKE : { kind: SpanKind.INTERNAL, links: [{ context: { traceId: suspended.traceId, spanId: suspended.spanId, traceFlags: suspended.flags, isRemote: true } }] };
  const span = tracer().startSpan(core.invokeSpanName, options, frame.traceContext);
  if (!span.isRecording()) return { span, sets: undefined };
  const lineage = spanLineage(frame);
  span.setAttributes(lineage);
  span.setAttributes(core.spanAttributes.invoke);
  return { span, sets: new SpanAttributeSets(lineage, core.spanAttributes) };
}

/**
 * Marks a span failed. The status message is the error's message with API keys and bearer
 * tokens redacted: error text is often copied from a provider's answer, which may echo a key.
 */
export function failSpan(span: Span, error: unknown, errorType?: string): void {
  if (!span.isRecording()) return;
  const e = error instanceof Error ? error : new Error(String(error));
  const message = modelVisibleText(e.message);
  span.setAttribute(ATTR.errorType, errorType ?? (e.name || 'Error'));
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.recordException({ name: e.name, message });
}

/** The run's own usage and its subtree's, stamped on its span as it ends. */
export function setRunTotals(span: Span, figures: RunFigures): void {
  span.setAttributes({
    [ATTR.inputTokens]: figures.own.inputTokens,
    [ATTR.outputTokens]: figures.own.outputTokens,
    [ATTR.totalInputTokens]: figures.total.inputTokens,
    [ATTR.totalOutputTokens]: figures.total.outputTokens,
  });
  if (figures.costUsd !== null) span.setAttribute(ATTR.costUsd, figures.costUsd);
  if (figures.totalCostUsd !== null) span.setAttribute(ATTR.totalCostUsd, figures.totalCostUsd);
}

/** A tool name as it may appear in telemetry: see shownName. */
export const telemetryToolName = shownName;

/**
 * `parent` with `span` active in it, for the work under the span. A span that records nothing and
 * carries no span context of its own (no SDK: the API's placeholder, the parent's context or none)
 * changes nothing a child span or a propagator reads, so the parent context serves as it is: an
 * OpenTelemetry context is a Map and three closures, the largest thing a run in flight held.
 */
export function contextWith(parent: Context, span: Span): Context {
  if (!span.isRecording()) {
    const own = span.spanContext();
    const above = trace.getSpanContext(parent);
    if (own === above || (!trace.isSpanContextValid(own) && (above === undefined || !trace.isSpanContextValid(above)))) return parent;
  }
  return trace.setSpan(parent, span);
}
