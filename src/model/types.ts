import type { Usage } from '../core/usage.js';

/** One call from the model asking for a tool. `arguments` is the raw JSON text the model wrote. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface Message {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
}

/** What the model is told about a tool; `parameters` is JSON Schema. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: object;
}

export interface ModelRequest {
  instructions?: string;
  messages: Message[];
  tools: ToolDefinition[];
  modelName?: string;
  temperature?: number;
  maxTokens?: number;
}

export interface ModelResponse {
  text: string;
  toolCalls: ToolCall[];
  usage?: Usage;
  finishReason: string;
  responseModel?: string;
}

/**
 * One piece of a streamed answer: text as it arrives, then exactly one `done` carrying the whole
 * assembled response (text, tool calls, usage, finish reason), the same value `generate()` returns.
 */
export type ModelStreamChunk = { type: 'text'; delta: string } | { type: 'done'; response: ModelResponse };

export interface ModelOverrides {
  modelName?: string;
  temperature?: number;
  maxTokens?: number;
}

/**
 * A model behind any wire protocol. Providers hold no per-run state, so one instance is shared
 * safely by a parent and every child built from a spec.
 */
export interface ModelProvider {
  readonly providerName: string;
  readonly modelName: string;
  generate(request: ModelRequest, options?: { signal?: AbortSignal }): Promise<ModelResponse>;
  /**
   * The same call, streamed. Optional: a provider without it is called through `generate()`.
   * An abort of `signal` ends the iteration at once with an error named 'AbortError'; leaving the
   * loop early drops the underlying connection.
   */
  stream?(request: ModelRequest, options?: { signal?: AbortSignal }): AsyncIterable<ModelStreamChunk>;
  withOverrides?(overrides: ModelOverrides): ModelProvider;
}
