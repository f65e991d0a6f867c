import { DEFAULTS } from '../core/defaults.js';
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.js';
import { modelSettingsSchema } from '../model/model-settings.js';

const agentSchema = z
  .object({
    maxAgentDepth: z.number().int().min(0).max(32).default(DEFAULTS.maxAgentDepth),
    maxTurns: z.number().int().min(1).max(1000).default(DEFAULTS.maxTurns),
    askUserEnabled: z.boolean().default(false),
    childTimeoutMs: z.number().int().positive().optional(),
    maxConcurrentDelegations: z.number().int().min(1).max(1000).default(DEFAULTS.maxConcurrentDelegations),
  })
  .strict();

const modelSchema = modelSettingsSchema;

const configSchema = z
  .object({
    agent: agentSchema.default(agentSchema.parse({})),
    model: modelSchema.default({}),
    captureContent: z.boolean().default(false),
  })
  .strict();

export type FrameworkConfigInput = z.input<typeof configSchema>;
export type AgentSettings = Readonly<z.output<typeof agentSchema>>;
export type ModelSettings = Readonly<z.output<typeof modelSchema>>;

export interface ChildConfigOverrides {
  name: string;
  modelName?: string;
  temperature?: number;
  maxTokens?: number;
  agent?: z.input<typeof agentSchema>;
  captureContent?: boolean;
}

function validate(input: unknown): z.output<typeof configSchema> {
  const parsed = configSchema.safeParse(input ?? {});
  if (!parsed.success) {
    throw new ConfigurationError(
      `invalid FrameworkConfig: ${z.prettifyError(parsed.error)}. Allowed: { agent: { maxAgentDepth, maxTurns, ` +
        `askUserEnabled, childTimeoutMs, maxConcurrentDelegations }, model: { modelName, temperature, maxTokens }, captureContent }.`,
    );
  }
  return parsed.data;
}

/**
 * The behaviour flags of an agent, validated once at construction and frozen: the loop reads
 * them on every turn and must never see them change under it.
 */
export class FrameworkConfig {
  readonly agent: AgentSettings;
  readonly model: ModelSettings;
  readonly captureContent: boolean;
  /** Set on configs made by `FrameworkConfig.child`: the child they were made for. */
  readonly name: string | undefined;

  constructor(input: FrameworkConfigInput = {}, name?: string) {
    const v = validate(input);
    this.agent = Object.freeze(v.agent);
    this.model = Object.freeze(v.model);
    this.captureContent = v.captureContent;
    this.name = name;
    Object.freeze(this);
  }

  /**
   * A child's config: every behaviour flag of the parent, then the overrides. Built from the
   * parent's values rather than defaults so children never drift from their parent.
   */
  static child(parent: FrameworkConfig, overrides: ChildConfigOverrides): FrameworkConfig {
    if (!(parent instanceof FrameworkConfig)) {
      throw new ConfigurationError('FrameworkConfig.child(parent, overrides) needs a FrameworkConfig as parent.');
    }
    if (typeof overrides !== 'object' || overrides === null || typeof overrides.name !== 'string' || overrides.name === '') {
      throw new ConfigurationError('FrameworkConfig.child needs overrides with a non-empty name: FrameworkConfig.child(parent, { name: "researcher" }).');
    }
    const { name, modelName, temperature, maxTokens, agent, captureContent, ...rest } = overrides;
    const unknown = Object.keys(rest);
    if (unknown.length > 0) {
      throw new ConfigurationError(
        `FrameworkConfig.child: unknown override(s) ${unknown.map((k) => `"${k}"`).join(', ')}. Allowed: name, modelName, temperature, maxTokens, agent, captureContent.`,
      );
    }
    const model: Record<string, unknown> = { ...parent.model };
    if (modelName !== undefined) model.modelName = modelName;
    if (temperature !== undefined) model.temperature = temperature;
    if (maxTokens !== undefined) model.maxTokens = maxTokens;
    return new FrameworkConfig(
      {
        agent: { ...parent.agent, ...(agent ?? {}) },
        model,
        captureContent: captureContent ?? parent.captureContent,
      },
      name,
    );
  }

  /** The input that would rebuild this config. */
  toJSON(): FrameworkConfigInput {
    return { agent: { ...this.agent }, model: { ...this.model }, captureContent: this.captureContent };
  }
}
