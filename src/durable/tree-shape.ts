import { createHash } from 'node:crypto';
import { ConfigurationError } from '../core/errors.js';
import { childOf } from '../delegation/child-door.js';
import type { DelegationRoster } from '../delegation/roster.js';
import type { Tool } from '../tool/define-tool.js';

/**
 * An agent tree as its record needs it: each agent's name (its roster name below the root), its
 * tools' names and its children. A durable tree is refused by workers whose agents have another
 * shape: its recorded steps name tools and children that must still be there.
 */
export interface TreeShape {
  readonly name: string;
  readonly tools: readonly string[];
  readonly children: readonly TreeShape[];
}

/** The deepest tree a shape is taken of: a delegation ceiling never lets a tree be deeper. */
const MAX_SHAPE_DEPTH = 32;

export function toolsOf(agent: unknown): readonly Tool[] {
  const tools = (agent as { tools?: unknown } | null)?.tools;
  return Array.isArray(tools) ? (tools as Tool[]) : [];
}

/** The roster an agent delegates through, if it delegates: what its Child declares (a child outside symfonic declares none). */
function declaredRoster(agent: unknown): DelegationRoster | undefined {
  return childOf(agent)?.declares.roster;
}

export function treeShape(name: string, agent: unknown, depth = 0): TreeShape {
  if (depth > MAX_SHAPE_DEPTH) throw new ConfigurationError(`agent "${name}" sits deeper than ${MAX_SHAPE_DEPTH} levels: no delegation tree can be that deep.`);
  const roster = declaredRoster(agent);
  const tools = toolsOf(agent)
    .map((t) => t.name)
    .sort();
  const children = roster === undefined ? [] : roster.names.map((n) => treeShape(n, roster.find(n)!.agent, depth + 1));
  return { name, tools, children };
}

/** A name for a set of trees: what DBOS calls the application version, so a worker runs only trees of its own agents. */
export function shapeVersion(shapes: readonly TreeShape[]): string {
  const canonical = JSON.stringify([...shapes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
  return `symfonic-${createHash('sha256').update(canonical).digest('hex').slice(0, 16)}`;
}

/** What changed from the recorded shape to this one, one line per agent that changed; empty when nothing did. */
export function shapeChanges(recorded: TreeShape, current: TreeShape): string[] {
  const out: string[] = [];
  if (recorded.name !== current.name) return [`the root agent was "${recorded.name}" and is "${current.name}"`];
  const stack: [TreeShape, TreeShape, string][] = [[recorded, current, recorded.name]];
  while (stack.length > 0) {
    const [was, is, path] = stack.pop()!;
    const parts: string[] = [];
    const tools = difference(was.tools, is.tools);
    if (tools.gone.length > 0) parts.push(`${plural('tool', tools.gone)} ${quoted(tools.gone)} ${tools.gone.length > 1 ? 'are' : 'is'} gone`);
    if (tools.added.length > 0) parts.push(`${plural('tool', tools.added)} ${quoted(tools.added)} ${tools.added.length > 1 ? 'are' : 'is'} new`);
    const children = difference(
      was.children.map((c) => c.name),
      is.children.map((c) => c.name),
    );
    if (children.gone.length > 0) parts.push(`${plural('child', children.gone)} ${quoted(children.gone)} ${children.gone.length > 1 ? 'are' : 'is'} gone`);
    if (children.added.length > 0) parts.push(`${quoted(children.added)} ${children.added.length > 1 ? 'are' : 'is'} new`);
    if (parts.length > 0) out.push(`agent "${path}": ${parts.join(', ')}`);
    for (const c of was.children) {
      const now = is.children.find((x) => x.name === c.name);
      if (now !== undefined) stack.push([c, now, `${path}/${c.name}`]);
    }
  }
  return out;
}

function difference(was: readonly string[], is: readonly string[]): { gone: string[]; added: string[] } {
  return { gone: was.filter((n) => !is.includes(n)), added: is.filter((n) => !was.includes(n)) };
}

const quoted = (names: readonly string[]) => names.map((n) => `"${n}"`).join(', ');
const plural = (word: string, names: readonly string[]) => (names.length > 1 ? (word === 'child' ? 'children' : `${word}s`) : word);
