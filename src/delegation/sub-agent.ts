import { z, type ZodType } from 'zod';
import { ConfigurationError } from '../core/errors.js';
import { refuseUnknownKeys } from '../core/options.js';
import { modelSettingsSchema } from '../model/model-settings.js';
import type { ModelProvider } from '../model/types.js';
import { NAME_PATTERN, isTool, type Tool } from '../tool/define-tool.js';
import type { ChildAgent } from './child.js';

function checkName(kind: string, name: unknown): string {
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    throw new ConfigurationError(
      `${kind} name ${JSON.stringify(name)} is not allowed: use 1–64 letters, digits, "_" or "-". The name is how the ` +
        `model addresses the child in run_agent, and tool-call arguments cannot carry anything looser reliably.`,
    );
  }
  return name;
}

function checkText(kind: string, name: string, field: string, value: unknown, required: boolean): string | undefined {
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ConfigurationError(`${kind} "${name}": ${field} must be a non-empty string; the parent's model reads it to choose a child.`);
  }
  return value;
}


function checkOutputType(kind: string, name: string, value: unknown): ZodType | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof z.ZodType)) throw new ConfigurationError(`${kind} "${name}": outputType must be a zod schema, e.g. z.object({ answer: z.string() }).`);
  return value;
}

export interface SubAgentOptions {
  name: string;
  /** Anything with an async run: a SymfonicAgent, a facade Agent, a remote child, an adapter. */
  agent: ChildAgent;
  description: string;
  whenToUse?: string;
  /** A zod schema the child's answer must satisfy as JSON; run_agent then returns the validated JSON. */
  outputType?: ZodType;
}

/** A child the caller built: anything with an async run. The caller closes it. */
export class SubAgent {
  readonly name: string;
  readonly agent: ChildAgent;
  readonly description: string;
  readonly whenToUse: string | undefined;
  readonly outputType: ZodType | undefined;

  constructor(options: SubAgentOptions) {
    if (typeof options !== 'object' || options === null) throw new ConfigurationError('SubAgent needs { name, agent, description, whenToUse? }.');
    refuseUnknownKeys('SubAgent', options, ['name', 'agent', 'description', 'whenToUse', 'outputType']);
    this.name = checkName('SubAgent', options.name);
    if (typeof (options.agent as { run?: unknown } | null)?.run !== 'function') {
      throw new ConfigurationError(`SubAgent "${this.name}": agent must be an object with an async run(task, options) method.`);
    }
    // A facade (the simple Agent) runs on a prompt alone: it adapts itself, as FacadeChild would.
    const asChild = (options.agent as { asChild?: unknown }).asChild;
    this.agent = typeof asChild === 'function' ? (asChild.call(options.agent) as ChildAgent) : options.agent;
    this.description = checkText('SubAgent', this.name, 'description', options.description, true)!;
    this.whenToUse = checkText('SubAgent', this.name, 'whenToUse', options.whenToUse, false);
    this.outputType = checkOutputType('SubAgent', this.name, options.outputType);
    Object.freeze(this);
  }
}

export interface SubAgentSpecOptions {
  name: string;
  description: string;
  whenToUse?: string;
  tools?: readonly Tool[];
  instructions?: string;
  /** The child's own model; the parent's when omitted. */
  modelProvider?: ModelProvider;
  modelName?: string;
  temperature?: number;
  maxTokens?: number;
  domainDescription?: string;
  /** A zod schema the child's answer must satisfy as JSON; run_agent then returns the validated JSON. */
  outputType?: ZodType;
}

const SPEC_KEYS = ['name', 'description', 'whenToUse', 'tools', 'instructions', 'modelProvider', 'modelName', 'temperature', 'maxTokens', 'domainDescription', 'outputType'];


/**
 * A child the parent builds: it inherits the parent's provider and behaviour flags, takes its
 * own tools, instructions and model overrides, and is closed with the parent.
 */
export class SubAgentSpec {
  readonly name: string;
  readonly description: string;
  readonly whenToUse: string | undefined;
  readonly tools: readonly Tool[];
  readonly instructions: string | undefined;
  readonly modelProvider: ModelProvider | undefined;
  readonly outputType: ZodType | undefined;
  readonly modelName: string | undefined;
  readonly temperature: number | undefined;
  readonly maxTokens: number | undefined;
  readonly domainDescription: string | undefined;

  constructor(options: SubAgentSpecOptions) {
    if (typeof options !== 'object' || options === null) throw new ConfigurationError('SubAgentSpec needs { name, description, ... }.');
    refuseUnknownKeys('SubAgentSpec', options, SPEC_KEYS, { renamed: { provider: 'modelProvider' } });
    this.name = checkName('SubAgentSpec', options.name);
    this.description = checkText('SubAgentSpec', this.name, 'description', options.description, true)!;
    this.whenToUse = checkText('SubAgentSpec', this.name, 'whenToUse', options.whenToUse, false);
    this.instructions = checkText('SubAgentSpec', this.name, 'instructions', options.instructions, false);
    this.domainDescription = checkText('SubAgentSpec', this.name, 'domainDescription', options.domainDescription, false);
    const tools = options.tools ?? [];
    if (!Array.isArray(tools) || !tools.every(isTool)) {
      throw new ConfigurationError(`SubAgentSpec "${this.name}": tools must be an array of tools made by defineTool.`);
    }
    this.tools = Object.freeze([...tools]);
    if (options.modelProvider !== undefined && typeof (options.modelProvider as { generate?: unknown } | null)?.generate !== 'function') {
      throw new ConfigurationError(`SubAgentSpec "${this.name}": modelProvider must be a ModelProvider (an object with generate()).`);
    }
    this.modelProvider = options.modelProvider;
    this.outputType = checkOutputType('SubAgentSpec', this.name, options.outputType);
    const parsed = modelSettingsSchema.safeParse({ modelName: options.modelName, temperature: options.temperature, maxTokens: options.maxTokens });
    if (!parsed.success) throw new ConfigurationError(`SubAgentSpec "${this.name}": ${z.prettifyError(parsed.error)}.`);
    this.modelName = parsed.data.modelName;
    this.temperature = parsed.data.temperature;
    this.maxTokens = parsed.data.maxTokens;
    Object.freeze(this);
  }
}
