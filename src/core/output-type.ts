/**
 * What an `outputType` must be: a zod schema, and one shallow enough to convert to JSON Schema
 * and to validate with. Both recurse once per level, so a type 2,000 levels deep overflowed the
 * stack (a RangeError from inside zod) when the run sent it; it is refused where it is given.
 */
import { z } from 'zod';

/**
 * The deepest outputType accepted, counting every wrapper (`.optional()`, `.nullable()`, a pipe)
 * as a level: far past any answer a model is asked for, far below the stack's limit.
 */
export const MAX_OUTPUT_TYPE_DEPTH = 100;

const isZod = (v: unknown): v is z.ZodType => v instanceof z.ZodType;

/** The zod types directly inside `type`: whatever its definition holds (shape, element, options, inner type…). */
function childrenOf(type: z.ZodType): z.ZodType[] {
  const found: z.ZodType[] = [];
  for (const value of Object.values(type._zod.def as unknown as Record<string, unknown>)) {
    if (isZod(value)) found.push(value);
    else if (Array.isArray(value)) found.push(...value.filter(isZod));
    else if (typeof value === 'object' && value !== null) found.push(...Object.values(value as Record<string, unknown>).filter(isZod));
  }
  return found;
}

/**
 * How deep `type` nests, counted without recursion (so the count itself cannot overflow) and
 * stopping past `limit`. A recursive type (`z.lazy`, or a getter in an object's shape) is counted
 * once around its loop: JSON Schema refers back to it instead of writing it out again.
 */
export function nestingDepth(type: z.ZodType, limit: number): number {
  const onPath = new Set<z.ZodType>();
  const stack: { type: z.ZodType; depth: number; children?: z.ZodType[] }[] = [{ type, depth: 1 }];
  let deepest = 0;
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.children === undefined) {
      deepest = Math.max(deepest, top.depth);
      if (deepest > limit) return deepest;
      onPath.add(top.type);
      top.children = childrenOf(top.type).filter((c) => !onPath.has(c));
    }
    const next = top.children.pop();
    if (next === undefined) {
      onPath.delete(top.type);
      stack.pop();
    } else stack.push({ type: next, depth: top.depth + 1 });
  }
  return deepest;
}

/** Why `value` cannot be an outputType, or undefined when it can. `where` names the option, e.g. "run option outputType". */
export function outputTypeProblem(value: unknown, where: string): string | undefined {
  if (!isZod(value)) return `${where} must be a zod schema, e.g. z.object({ answer: z.string() }).`;
  const depth = nestingDepth(value, MAX_OUTPUT_TYPE_DEPTH);
  if (depth <= MAX_OUTPUT_TYPE_DEPTH) return undefined;
  return (
    `${where} nests more than ${MAX_OUTPUT_TYPE_DEPTH} levels deep (each z.object, z.array, .optional() and other wrapper is a level), ` +
    `too deep to convert to JSON Schema and validate. Flatten it, or describe a recursive shape with z.lazy.`
  );
}
