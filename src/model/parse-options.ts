import type { z } from 'zod';
import { ConfigurationError } from '../core/errors.js';

/** Validates options once, into a ConfigurationError that names each bad option (never its value). */
export function parseOptions<S extends z.ZodType>(schema: S, input: unknown, factory: string, usage: string): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') return issue.keys.map((k) => `unknown option "${k}"`).join(', ');
    if (issue.path.length === 0) return 'expects an options object';
    return `option "${issue.path.join('.')}" ${issue.message}`;
  });
  throw new ConfigurationError(`${factory}(): ${problems.join('; ')}. Usage: ${usage}`);
}
