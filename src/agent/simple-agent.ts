import { z, type ZodType } from 'zod';
import { ConfigurationError } from '../core/errors.js';
import { FacadeChild } from '../delegation/facade-child.js';
import type { Message, ModelProvider, ToolChoice } from '../model/types.js';
import type { Capability } from '../tool/capability.js';
import type { Tool } from '../tool/define-tool.js';
import { named, readOptions, refuseUnknownKeys } from '../core/options.js';
import { facadeOptionsSchema, RENAMED } from './agent-options.js';
import { assembleCore } from './agent-assembly.js';
import type { AgentCore } from './agent-core.js';
import type { AgentResponse } from './agent-response.js';
import { executeRun } from './run-loop.js';
import { callerStart, resumeStart } from './run-start.js';
import { declareAgentChild } from './agent-child.js';
import type { ResumeOptions } from './resume-options.js';
import type { RunSnapshot } from '../run/snapshot/run-snapshot.js';
import type { EncryptedSnapshot, SnapshotOptions } from '../run/snapshot/snapshot-options.js';

export { OutputValidationError } from '../core/structured-output.js';

export interface Attachment {
  name: string;
  content: string;
  mediaType?: string;
}

export interface AgentOptions extends SnapshotOptions {
  name: string;
  modelProvider: ModelProvider;
  instructions?: string;
  tools?: readonly Tool[];
  capabilities?: readonly Capability[];
  /** As SymfonicAgentOptions.toolChoice: for the first model call of each run. */
  toolChoice?: ToolChoice;
}

export interface AgentRunOptions<T = unknown> {
  attachments?: readonly Attachment[];
  /** Earlier turns of the conversation, oldest first. */
  history?: readonly Message[];
  /** A zod schema the final answer must satisfy as JSON; the parsed value is `output`. */
  outputType?: ZodType<T>;
  signal?: AbortSignal;
  /** This run's toolChoice, over the agent's (see RunOptions.toolChoice). */
  toolChoice?: ToolChoice;
}

/**
 * What the facade's run answers: the one result type (`text`, `messages`, `runId`, `durationMs`,
 * `output`, `usage` are the facade's contract; the rest of AgentResponse comes along).
 */
export type AgentResult<T = unknown> = AgentResponse<T>;

const RUN_KEYS = ['attachments', 'history', 'outputType', 'signal', 'toolChoice'] as const;
const attachmentSchema = z.object({ name: z.string().min(1), content: z.string(), mediaType: z.string().optional() }).strict();

function renderPrompt(prompt: string, attachments: readonly Attachment[] | undefined): string {
  if (!attachments || attachments.length === 0) return prompt;
  const parsed = z.array(attachmentSchema).safeParse(attachments);
  if (!parsed.success) {
    throw new ConfigurationError(`invalid attachments: ${z.prettifyError(parsed.error)}. Each is { name, content, mediaType? }.`);
  }
  const parts = parsed.data.map((a) => `<attachment name="${a.name}"${a.mediaType ? ` type="${a.mediaType}"` : ''}>\n${a.content}\n</attachment>`);
  return `${prompt}\n\n${parts.join('\n')}`;
}

/**
 * The simple facade: an agent with a model, instructions and tools, and no scope or depth, by
 * design; it is the thing to reach for first. It runs on the kernel loop, so its runs are traced
 * and accounted like any other, and given to `SubAgent` it runs as a child of its delegator.
 */
export class Agent {
  readonly name: string;
  readonly modelProvider: ModelProvider;
  readonly instructions: string | undefined;
  readonly capabilities: readonly Capability[];
  readonly tools: readonly Tool[];
  readonly #core: AgentCore;

  constructor(options: AgentOptions) {
    const parts = readOptions(named('Agent', options), options, facadeOptionsSchema, { renamed: RENAMED, example: 'new Agent({ name, modelProvider, instructions?, tools? })' });
    const { core, tools } = assembleCore(parts);
    this.#core = core;
    this.name = core.name;
    this.modelProvider = core.modelProvider;
    this.instructions = core.instructions;
    this.capabilities = Object.freeze([...(options.capabilities ?? [])]);
    this.tools = tools;
    declareAgentChild(this, core, true);
  }

  run<T = unknown>(prompt: string, options: AgentRunOptions<T> = {}): Promise<AgentResult<T>> {
    try {
      if (typeof prompt !== 'string') throw new ConfigurationError(`agent "${this.name}": the prompt must be a string.`);
      if (typeof options !== 'object' || options === null) throw new ConfigurationError(`agent "${this.name}": run options must be an object.`);
      refuseUnknownKeys(`agent "${this.name}" run`, options, RUN_KEYS);
      if (options.history !== undefined && !Array.isArray(options.history)) {
        throw new ConfigurationError(`agent "${this.name}": history must be an array of messages.`);
      }
      const runOptions = {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.outputType !== undefined ? { outputType: options.outputType } : {}),
        ...(options.history !== undefined ? { history: options.history } : {}),
        ...(options.toolChoice !== undefined ? { toolChoice: options.toolChoice } : {}),
      };
      const start = callerStart(this.#core, runOptions);
      return executeRun(this.#core, renderPrompt(prompt, options.attachments), start) as Promise<AgentResult<T>>;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Goes on with a suspended run of this agent, as SymfonicAgent.resume does. */
  resume<T = unknown>(snapshot: RunSnapshot | EncryptedSnapshot | string, options: ResumeOptions): Promise<AgentResult<T>> {
    return resumeStart(this.#core, snapshot, options).then((start) => executeRun(this.#core, '', start)) as Promise<AgentResult<T>>;
  }

  /**
   * This agent as a delegation child (a leaf, checked): what `new SubAgent({ agent })` uses when
   * given a facade, so `new SubAgent({ name, agent: new Agent(...), description })` just works.
   */
  asChild(): FacadeChild {
    return new FacadeChild(this);
  }
}
