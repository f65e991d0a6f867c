/**
 * What an MCP `tools/call` answers, as the text of the tool message the model reads: structured
 * content as JSON when the server gave it (its text blocks are meant to repeat it), else the text
 * blocks joined, with images, audio and resources described in one line each. A result longer
 * than the caller's limit is cut where every tool's result is (result-bound.ts).
 */

/** What `tools/call` answers, as far as it is turned into a tool message. */
export interface McpCallResult {
  content?: unknown[] | undefined;
  structuredContent?: unknown;
  isError?: boolean | undefined;
  /** The result shape of protocol versions before 2024-11-05. */
  toolResult?: unknown;
  [key: string]: unknown;
}

/** One content block of a tool result as text the model reads. */
function blockText(block: unknown): string {
  const b = (typeof block === 'object' && block !== null ? block : {}) as Record<string, unknown>;
  const resource = (typeof b['resource'] === 'object' && b['resource'] !== null ? b['resource'] : {}) as Record<string, unknown>;
  switch (b['type']) {
    case 'text':
      return String(b['text'] ?? '');
    case 'image':
    case 'audio':
      return `[${String(b['type'])} ${String(b['mimeType'] ?? '')}, ${Math.floor((String(b['data'] ?? '').length * 3) / 4)} bytes]`;
    case 'resource_link':
      return `[resource ${String(b['uri'] ?? '')}${b['name'] ? ` "${String(b['name'])}"` : ''}]`;
    case 'resource':
      return typeof resource['text'] === 'string' ? resource['text'] : `[resource ${String(resource['uri'] ?? '')} ${String(resource['mimeType'] ?? '')}]`.trim();
    default:
      return JSON.stringify(block) ?? '';
  }
}

export const contentText = (result: McpCallResult): string =>
  Array.isArray(result.content) ? result.content.map(blockText).filter((t) => t !== '').join('\n') : '';

export function resultText(result: McpCallResult): string {
  if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  if (result.content === undefined && result.toolResult !== undefined) return JSON.stringify(result.toolResult);
  return contentText(result);
}
