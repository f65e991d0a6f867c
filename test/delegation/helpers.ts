import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SPAN_ATTRIBUTES, type ChildAgent, type ChildResponse, type ChildRunOptions, type Message, type ModelRequest } from '../../src/index.js';
import type { ScriptedResponder, ScriptedTurn } from '../../src/testing/index.js';

export interface ChildCall {
  task: string;
  options: ChildRunOptions;
}

/** A child test double: records each task and the options the roster passed, and answers via `answer`. */
export function spyChild(
  answer: (task: string, options: ChildRunOptions) => string | Promise<string> = (task) => `done: ${task}`,
): ChildAgent & { calls: ChildCall[]; closed: number } {
  const child = {
    calls: [] as ChildCall[],
    closed: 0,
    async run(task: string, options: ChildRunOptions): Promise<ChildResponse> {
      child.calls.push({ task, options });
      return { finalResponse: await answer(task, options), runId: options.runId };
    },
    close(): void {
      child.closed++;
    },
  };
  return child;
}

/**
 * Wraps a child (typically a SymfonicAgent) to record what the roster called it with and what it
 * answered, so lineage can be read on both sides of a hop.
 */
export function recorded<R extends ChildResponse>(inner: { run(task: string, options: ChildRunOptions): Promise<R> }): ChildAgent & {
  calls: ChildCall[];
  responses: R[];
} {
  const wrapper = {
    calls: [] as ChildCall[],
    responses: [] as R[],
    async run(task: string, options: ChildRunOptions): Promise<R> {
      wrapper.calls.push({ task, options });
      const response = await inner.run(task, options);
      wrapper.responses.push(response);
      return response;
    },
  };
  return wrapper;
}

/** The first user message of a request: the query (or task) the run was started with. */
export const firstUser = (req: ModelRequest): string => req.messages.find((m) => m.role === 'user')?.content ?? '';

/** Tool results the request carries, in order. */
export const toolResults = (req: ModelRequest): string[] => req.messages.filter((m) => m.role === 'tool').map((m) => m.content);

export const toolNames = (req: ModelRequest): string[] => req.tools.map((t) => t.name);

export type Call = { name: string; arguments: unknown };

export const runAgent = (name: string, task: unknown): Call => ({ name: 'run_agent', arguments: { name, task } });

/**
 * A responder for a model that makes `calls` on its first turn and, once it has read their
 * results, answers with `answer(results)`. Keyed on whether tool results are present rather than
 * on the call index, so one responder can serve several runs of the same agent.
 */
export function callsThenAnswer(
  calls: Call[] | ((req: ModelRequest) => Call[]),
  answer: (results: string[], req: ModelRequest) => string = (results) => `final: ${results.join(' | ')}`,
): ScriptedResponder {
  return (req): ScriptedTurn => {
    const results = toolResults(req);
    if (results.length === 0) {
      const planned = typeof calls === 'function' ? calls(req) : calls;
      if (planned.length > 0) return { toolCalls: planned };
    }
    return answer(results, req);
  };
}

/** The `execute_tool run_agent` spans, in the order they ended. */
export function runAgentSpans(spans: ReadableSpan[]): ReadableSpan[] {
  return spans.filter((s) => s.name === 'execute_tool run_agent');
}

export const outcomeOf = (span: ReadableSpan): unknown => span.attributes[SPAN_ATTRIBUTES.delegationOutcome];

export const userMessage = (content: string): Message => ({ role: 'user', content });
