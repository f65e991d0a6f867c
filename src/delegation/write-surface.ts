import { ConfigurationError } from '../core/errors.js';
import type { Tool } from '../tool/define-tool.js';
import type { Capability } from '../tool/capability.js';

/** Every tool an agent-like object exposes: its own list and what its capabilities contribute. */
function declaredTools(agent: unknown): Tool[] {
  const a = agent as { tools?: unknown; capabilities?: unknown } | null;
  const tools: Tool[] = [];
  if (Array.isArray(a?.tools)) tools.push(...(a.tools as Tool[]));
  if (Array.isArray(a?.capabilities)) {
    for (const c of a.capabilities as Capability[]) {
      const contributed = typeof c?.contribute === 'function' ? c.contribute().tools : undefined;
      if (contributed) tools.push(...contributed);
    }
  }
  return tools;
}

/**
 * Refuses a pre-built child holding a write-surface tool. Such a child cannot be sanitised after
 * construction, and registering it anyway would leave the caller trusting a lock that did not hold.
 */
export function assertNoWriteSurface(childName: string, agent: unknown): void {
  const writers = declaredTools(agent).filter((t) => t?.writeSurface === true);
  if (writers.length > 0) {
    throw new ConfigurationError(
      `sub-agent "${childName}" holds write-surface tool(s) ${writers.map((t) => `"${t.name}"`).join(', ')}. A pre-built ` +
        `child cannot be stripped of them after construction; build it without them, or declare it as a SubAgentSpec ` +
        `(the parent builds spec children without write-surface tools).`,
    );
  }
}

/** A spec child's tools with the write surface removed. */
export function withoutWriteSurface(tools: readonly Tool[]): Tool[] {
  return tools.filter((t) => !t.writeSurface);
}
