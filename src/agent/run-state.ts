import { context, trace, type Context, type Span } from '@opentelemetry/api';
import type { ZodType } from 'zod';
import type { RunEmitter } from '../core/run-event.js';
import type { RunFrame } from '../core/run-frame.js';
import type { Logger, LogBindings } from '../observability/logger.js';
import type { RunAccount } from '../accounting/accounting.js';
import type { Message } from '../model/types.js';
import type { AgentCore } from './agent-core.js';
import type { SpanAttributeSets } from './run-span.js';
import type { RunStart } from './run-start.js';

/**
 * Everything one run carries while it runs: its frame, its account, its span and the
 * conversation so far. One object, so the model turn and the tool dispatch each take the run
 * rather than a dozen loose values.
 */
export class RunState {
  readonly messages: Message[] = [];
  /** Tool calls in order across the run's turns: siblings often start in the same millisecond. */
  toolSeq = 0;
  /** Model calls made so far (the maxTurns count; it carries across a suspension). */
  turns = 0;
  readonly frame: RunFrame;
  readonly runContext: Context;
  /** The run's way into its tree's events; undefined when nobody listens, which keeps a plain run() free of them. */
  events: RunEmitter | undefined = undefined;
  private logger: Logger | undefined;

  constructor(
    readonly core: AgentCore,
    /** How the run came in: its placement, and what its door says of suspending and resuming. */
    readonly start: RunStart,
    readonly account: RunAccount,
    readonly span: Span,
    readonly sets: SpanAttributeSets | undefined,
    readonly instructions: string | undefined,
  ) {
    this.frame = start.frame;
    this.runContext = trace.setSpan(start.frame.traceContext ?? context.active(), span);
  }

  /** The schema the final answer must satisfy, if any: the run's own or its delegator's. */
  get outputType(): ZodType | undefined {
    return this.start.outputType;
  }

  /** Whether the run can suspend: not inside a wrapped child, whose wrapper's code cannot be resumed. */
  get suspendable(): boolean {
    return this.start.wrapped === undefined;
  }

  get requestModel(): string {
    return this.core.requestModel;
  }

  get chatSpanName(): string {
    return this.core.chatSpanName;
  }

  get signal(): AbortSignal {
    return this.frame.signal;
  }

  get tenantId(): string | null {
    return this.frame.scope?.tenantId ?? null;
  }

  /** The run's logger, made on first use: most runs never log. */
  log(): Logger {
    if (!this.logger) {
      const f = this.frame;
      const bindings: LogBindings = { agent: this.core.name, run_id: f.runId, root_run_id: f.rootRunId, parent_run_id: f.parentRunId, tenant_id: this.tenantId };
      const sc = this.span.spanContext();
      // Without an SDK the span is a placeholder with all-zero ids, which would only mislead.
      if (trace.isSpanContextValid(sc)) {
        bindings.trace_id = sc.traceId;
        bindings.span_id = sc.spanId;
      }
      this.logger = this.core.logger.child(bindings);
    }
    return this.logger;
  }
}
