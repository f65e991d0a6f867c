import { z } from 'zod';

/**
 * The sampling temperature every model setting accepts. 2 is the widest bound a supported
 * protocol takes (OpenAI's); a provider with a narrower one (Anthropic: 1) refuses the call itself,
 * with its own message, rather than symfonic guessing which server is behind a URL.
 */
export const TEMPERATURE_RANGE = { min: 0, max: 2 } as const;

export const modelNameSchema = z
  .string({
    error: (issue) =>
      issue.input === undefined ? 'is required: pass the model name, e.g. model: "gpt-4o-mini"' : 'must be a string',
  })
  .min(1, 'must be a non-empty model name');

const temperatureSchema = z
  .number('must be a number')
  .min(TEMPERATURE_RANGE.min, `must be ${TEMPERATURE_RANGE.min} or more`)
  .max(TEMPERATURE_RANGE.max, `must be ${TEMPERATURE_RANGE.max} or less`);

export const maxTokensSchema = z.int('must be a whole number of tokens').positive('must be greater than 0');

/**
 * The model settings an agent sends with every request, and a provider's `withOverrides` takes:
 * one schema for a config's `model` section, a spec child's overrides and a provider's overrides,
 * so each accepts exactly what the others do.
 */
export const modelSettingsSchema = z.strictObject({
  modelName: modelNameSchema.optional(),
  temperature: temperatureSchema.optional(),
  maxTokens: maxTokensSchema.optional(),
});
