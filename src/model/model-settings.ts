import { z } from 'zod';

/**
 * The model settings an agent sends with every request: one schema for a config's `model`
 * section and a spec child's overrides, so a child accepts exactly what its parent's config does.
 */
export const modelSettingsSchema = z
  .object({
    modelName: z.string().min(1).optional(),
    temperature: z.number().min(0).max(2).optional(),
    maxTokens: z.number().int().positive().optional(),
  })
  .strict();
