import { context as otelContext, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { Usage } from '../core/usage.js';
import { ATTR, OPERATION, TRACER_NAME } from '../observability/attributes.js';

/**
 * The caller's side of a remote hop, as the OpenTelemetry GenAI conventions name a call to an
 * agent in another process: `invoke_agent {name}`, kind CLIENT, with the server's address. It
 * sits under the delegating `execute_tool run_agent` span, and the served run's `invoke_agent`
 * span under it. It carries no run id: the run is the served one, not this call.
 */
export class RemoteSpan {
  readonly span: Span;
  /** The context the call's traceparent is written from: this span's. */
  readonly context: Context;

  constructor(name: string, server: { address: string; port: number }, parent: Context | undefined) {
    const base = parent ?? otelContext.active();
    this.span = trace.getTracer(TRACER_NAME).startSpan(
      `${OPERATION.invokeAgent} ${name}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR.operationName]: OPERATION.invokeAgent,
          [ATTR.agentName]: name,
          [ATTR.providerName]: 'a2a',
          [ATTR.serverAddress]: server.address,
          [ATTR.serverPort]: server.port,
        },
      },
      base,
    );
    this.context = trace.setSpan(base, this.span);
  }

  /** The remote task's id, once known: where to look for this call on the other side. */
  taskId(id: string | undefined): void {
    if (id !== undefined && this.span.isRecording()) this.span.setAttribute('symfonic.remote.task_id', id);
  }

  /** The served tree sent more run events than the call takes: why, as a span event. */
  eventsLimited(why: string): void {
    if (this.span.isRecording()) this.span.addEvent('symfonic.remote.events_limited', { 'symfonic.remote.limit': why });
  }

  end(usage: Usage | undefined, error: Error | undefined): void {
    if (usage !== undefined && this.span.isRecording()) {
      this.span.setAttributes({ [ATTR.inputTokens]: usage.inputTokens, [ATTR.outputTokens]: usage.outputTokens, [ATTR.usageSource]: usage.source });
    }
    if (error !== undefined) {
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
      this.span.setAttribute(ATTR.errorType, error.name || 'Error');
    }
    this.span.end();
  }
}
