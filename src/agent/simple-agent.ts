import { z, type ZodType } from 'zod';
import { RUN_AS_CHILD } from '../core/child-run.js';
import { ConfigurationError, SymfonicError } from '../core/errors.js';
import type { Usage } from '../core/usage.js';
import type { ChildRunOptions } from '../delegation/child.js';
import type { Message, ModelProvider } from '../model/types.js';
import type { Capability } from '../tool/capability.js';
import type { Tool } from '../tool/define-tool.js';
import type { AgentResponse } from './agent-response.js';
import { SymfonicAgent } from './symfonic-agent.js';

export interface Attachment {
  name: string;
  content: string;
  mediaType?: string;
}

export interface AgentRunOptions<T = unknown> {
  attachments?: readonly Attachment[];
  /** Earlier turns of the conversation, oldest first. */
  history?: readonly Message[];
  /** A zod schema the final answer must satisfy as JSON; the parsed value is `output`. */
  outputType?: ZodType<T>;
  signal?: AbortSignal;
}

export interface AgentResult<T = unknown> {
  text: string;
  messages: Message[];
  runId: string;
  durationMs: number;
  output?: T;
  usage: Usage;
}

/** The model's final answer did not satisfy the run's outputType. */
export class OutputValidationError extends SymfonicError {
  constructor(
    message: string,
    readonly text: string,
  ) {
    super(message);
  }
}

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

/** The JSON in a model's answer: the whole text, or the body of a fenced code block. */
function jsonText(text: string): string {
  const fenced = /```(?:json)?\s*\n?([\s\S]*?)```/.exec(text);
  return (fenced ? fenced[1]! : text).trim();
}

function parseOutput<T>(schema: ZodType<T>, text: string): T {
  let value: unknown;
  try {
    value = JSON.parse(jsonText(text));
  } catch (error) {
    throw new OutputValidationError(
      `the model's answer is not JSON, so it cannot satisfy the outputType (${(error as Error).message}). ` +
        `Tighten the instructions, or drop outputType and read result.text.`,
      text,
    );
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new OutputValidationError(
      `the model's answer does not match the outputType: ${z.prettifyError(parsed.error)}. Tighten the instructions or relax the schema.`,
      text,
    );
  }
  return parsed.data;
}

/**
 * The simple facade: an agent with a model, instructions and tools, and no scope or depth, by
 * design; it is the thing to reach for first. It runs on the kernel loop, so its runs are traced
 * and accounted like any other.
 */
export class Agent {
  readonly name: string;
  readonly model: ModelProvider;
  readonly instructions: string | undefined;
  readonly capabilities: readonly Capability[];
  readonly tools: readonly Tool[];
  private readonly kernel: SymfonicAgent;

  constructor(options: { name: string; model: ModelProvider; instructions?: string; tools?: readonly Tool[]; capabilities?: readonly Capability[] }) {
    if (typeof options !== 'object' || options === null) throw new ConfigurationError('Agent needs { name, model, instructions?, tools? }.');
    this.kernel = new SymfonicAgent({
      name: options.name,
      modelProvider: options.model,
      ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
      ...(options.tools !== undefined ? { tools: options.tools } : {}),
      ...(options.capabilities !== undefined ? { capabilities: options.capabilities } : {}),
    });
    this.name = this.kernel.name;
    this.model = this.kernel.modelProvider;
    this.instructions = this.kernel.instructions;
    this.capabilities = this.kernel.capabilities;
    this.tools = this.kernel.tools;
  }

  async run<T = unknown>(prompt: string, options: AgentRunOptions<T> = {}): Promise<AgentResult<T>> {
    if (typeof prompt !== 'string') throw new ConfigurationError(`agent "${this.name}": the prompt must be a string.`);
    const schema = options.outputType;
    if (schema !== undefined && !(schema instanceof z.ZodType)) {
      throw new ConfigurationError(`agent "${this.name}": outputType must be a zod schema, e.g. z.object({ answer: z.string() }).`);
    }
    if (options.history !== undefined && !Array.isArray(options.history)) {
      throw new ConfigurationError(`agent "${this.name}": history must be an array of messages.`);
    }
    const response = await this.kernel.runWith(
      renderPrompt(prompt, options.attachments),
      options.signal ? { signal: options.signal } : undefined,
      {
        ...(options.history ? { history: options.history } : {}),
        ...(schema ? { instructions: this.instructionsFor(schema) } : {}),
      },
    );
    const result: AgentResult<T> = {
      text: response.finalResponse,
      messages: response.messages,
      runId: response.runId,
      durationMs: response.durationMs,
      usage: response.usage,
    };
    if (schema) result.output = parseOutput(schema, response.finalResponse);
    return result;
  }

  private instructionsFor(schema: ZodType): string {
    // The model writes what the schema parses, so describe its input side: transforms and defaults
    // are the schema's business after parsing, and must not make the run throw before it starts.
    const shape = JSON.stringify(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }));
    return `${this.instructions ? `${this.instructions}\n\n` : ''}Answer with only a JSON value that matches this JSON Schema, and nothing else:\n${shape}`;
  }

  /**
   * Runs as a delegation child under the parent's lineage and scope. Reached only through
   * FacadeChild, so the facade's own API keeps no scope or depth.
   */
  [RUN_AS_CHILD](task: string, options: ChildRunOptions): Promise<AgentResponse> {
    return this.kernel.run(task, options);
  }
}
