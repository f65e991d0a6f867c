import { z, type ZodType } from 'zod';
import { outputTypeProblem } from '../core/output-type.js';
import { checked, named, readOptions } from '../core/options.js';
import { modelSettingsSchema } from '../model/model-settings.js';
import { checkToolChoice } from '../model/tool-choice.js';
import type { ModelProvider, ToolChoice } from '../model/types.js';
import { NAME_PATTERN, isTool, type Tool } from '../tool/define-tool.js';
import type { ChildAgent } from './child.js';
import { childOf } from './child-door.js';
import { FacadeChild } from './facade-child.js';
import type { ChildReserve } from '../accounting/accounting.js';
import type { ChildMemory } from '../session/session-memory.js';

function nameOf(kind: string): z.ZodType<string> {
  return checked<string>(
    (n) => typeof n === 'string' && NAME_PATTERN.test(n),
    (n) =>
      `${kind} name ${JSON.stringify(n)} is not allowed: use 1–64 letters, digits, "_" or "-". The name is how the ` +
      `model addresses the child in run_agent, and tool-call arguments cannot carry anything looser reliably.`,
  );
}

function text(field: string): z.ZodType<string> {
  return checked<string>((v) => typeof v === 'string' && v.trim() !== '', `${field} must be a non-empty string; the parent's model reads it to choose a child.`);
}

/** A child's reservation: what a child that accounts none of its own calls holds against its delegator's budget while it runs. */
const reserveSchema = z
  .object({
    tokens: z.number().int('reserve.tokens must be a whole number of tokens').positive('reserve.tokens must be above 0: a child that may spend holds something').max(1_000_000_000),
    costUsd: z.number().positive('reserve.costUsd must be above 0').finite().optional(),
  })
  .strict()
  .optional();

const outputTypeSchema = checked<ZodType>((v) => outputTypeProblem(v, 'outputType') === undefined, (v) => outputTypeProblem(v, 'outputType')!).optional();

const memorySchema = z.enum(['none', 'session'], "memory must be 'none' (the child sees only its task, the default) or 'session' (it also sees its own earlier exchanges in the session)").optional();

const subAgentSchema = z
  .object({
    name: nameOf('SubAgent'),
    agent: checked<ChildAgent>((a) => typeof (a as { run?: unknown } | null)?.run === 'function', 'agent must be an object with an async run(task, options) method.'),
    description: text('description'),
    whenToUse: text('whenToUse').optional(),
    outputType: outputTypeSchema,
    reserve: reserveSchema,
    memory: memorySchema,
  })
  .strict();

const specSchema = z
  .object({
    name: nameOf('SubAgentSpec'),
    description: text('description'),
    whenToUse: text('whenToUse').optional(),
    tools: checked<readonly Tool[]>((t) => Array.isArray(t) && t.every(isTool), 'tools must be an array of tools made by defineTool.').optional(),
    instructions: text('instructions').optional(),
    modelProvider: checked<ModelProvider>((m) => typeof (m as { generate?: unknown } | null)?.generate === 'function', 'modelProvider must be a ModelProvider (an object with generate()).').optional(),
    domainDescription: text('domainDescription').optional(),
    outputType: outputTypeSchema,
    memory: memorySchema,
    // Checked against the child's tools when the parent builds it.
    toolChoice: z.unknown().optional(),
  })
  .extend(modelSettingsSchema.shape)
  .strict();

export interface SubAgentOptions {
  name: string;
  /** Anything with an async run: a SymfonicAgent, a facade Agent, a remote child, an adapter. */
  agent: ChildAgent;
  description: string;
  whenToUse?: string;
  /** A zod schema the child's answer must satisfy as JSON; run_agent then returns the validated JSON. */
  outputType?: ZodType;
  /**
   * What the child holds against its delegator's budget while it runs, when it accounts none of
   * its own model calls there (a foreign agent, a facade around one, a remote agent): `tokens`,
   * and `costUsd` (default: the tokens at the delegating model's dearer rate). Default: its task
   * plus 16,384 tokens. Its spend then settles that hold. A symfonic agent placed in the
   * delegator's ledger reserves per model call instead, and holds nothing.
   */
  reserve?: ChildReserve;
  /**
   * What the child remembers of its tree's session (the root run's scope.sessionId, on an agent
   * with sessions): 'none' (the default) — only its task, never the parent's conversation;
   * 'session' — also its own earlier exchanges in that session, in namespace `<parent>/<child>`.
   */
  memory?: ChildMemory;
}

/** A child the caller built: anything with an async run. The caller closes it. */
export class SubAgent {
  readonly name: string;
  readonly agent: ChildAgent;
  readonly description: string;
  readonly whenToUse: string | undefined;
  readonly outputType: ZodType | undefined;
  readonly reserve: ChildReserve | undefined;
  readonly memory: ChildMemory;

  constructor(options: SubAgentOptions) {
    const o = readOptions(named('SubAgent', options), options, subAgentSchema, { example: 'new SubAgent({ name, agent, description, whenToUse?, outputType?, reserve?: { tokens, costUsd? } })' });
    this.name = o.name;
    // A facade (the simple Agent) runs on a prompt alone: adapted as a leaf, which FacadeChild checks it is.
    this.agent = childOf(o.agent)?.declares.facade === true ? new FacadeChild(o.agent) : o.agent;
    this.description = o.description;
    this.whenToUse = o.whenToUse;
    this.outputType = o.outputType;
    this.reserve = o.reserve === undefined ? undefined : Object.freeze({ ...o.reserve });
    this.memory = o.memory ?? 'none';
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
  /**
   * What the child remembers of its tree's session (the root run's scope.sessionId, on an agent
   * with sessions): 'none' (the default) — only its task, never the parent's conversation;
   * 'session' — also its own earlier exchanges in that session, in namespace `<parent>/<child>`.
   */
  memory?: ChildMemory;
  /** The child's toolChoice, for the first model call of each of its runs (see SymfonicAgentOptions.toolChoice). */
  toolChoice?: ToolChoice;
}

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
  readonly memory: ChildMemory;
  readonly toolChoice: ToolChoice | undefined;

  constructor(options: SubAgentSpecOptions) {
    const o = readOptions(named('SubAgentSpec', options), options, specSchema, { renamed: { provider: 'modelProvider' }, example: 'new SubAgentSpec({ name, description, ... })' });
    this.name = o.name;
    this.description = o.description;
    this.whenToUse = o.whenToUse;
    this.instructions = o.instructions;
    this.domainDescription = o.domainDescription;
    this.tools = Object.freeze([...(o.tools ?? [])]);
    this.modelProvider = o.modelProvider;
    this.outputType = o.outputType;
    this.modelName = o.modelName;
    this.temperature = o.temperature;
    this.maxTokens = o.maxTokens;
    this.memory = o.memory ?? 'none';
    this.toolChoice = checkToolChoice(o.toolChoice, this.tools.map((t) => t.name), `SubAgentSpec "${o.name}":`);
    Object.freeze(this);
  }
}
