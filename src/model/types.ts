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

/**
 * The shape the final answer must take, as JSON Schema. A provider with `supportsOutputSchema`
 * makes the model answer in it natively (OpenAI-compatible: `response_format` json_schema;
 * Anthropic: a forced tool whose input is the answer); the answer still arrives as `text`, JSON.
 * `name` is what the provider calls the format: 1–64 letters, digits, "_" or "-".
 */
export interface OutputSchema {
  name: string;
  schema: object;
}

/**
 * Whether the model may call a tool ('auto', what a provider does when told nothing), must call
 * one ('required'), must not ('none'), or must call the named one. An agent's run applies it to
 * its first model call only (see RunOptions.toolChoice).
 */
export type ToolChoice = 'auto' | 'required' | 'none' | { name: string };

export interface ModelRequest {
  instructions?: string;
  messages: Message[];
  tools: ToolDefinition[];
  modelName?: string;
  temperature?: number;
  maxTokens?: number;
  outputSchema?: OutputSchema;
  /** Sent natively by each adapter when the request has tools; a name must be one of `tools`. */
  toolChoice?: ToolChoice;
}

export interface ModelResponse {
  text: string;
  toolCalls: ToolCall[];
  usage?: Usage;
  finishReason: string;
  responseModel?: string;
  /** The id the server gave this answer (`chatcmpl-…`, `msg_…`), when it sent one. */
  responseId?: string;
  /**
   * What the provider wants the user to know about this call without failing it (a server that
   * cannot take the tools it was sent, say): the run logs each at warn and marks the chat span
   * with a `symfonic.model.warning` event.
   */
  warnings?: readonly string[];
}

/**
 * One piece of a streamed answer: text as it arrives, then exactly one `done` carrying the whole
 * assembled response (text, tool calls, usage, finish reason), the same value `generate()` returns.
 */
export type ModelStreamChunk = { type: 'text'; delta: string } | { type: 'done'; response: ModelResponse };

export interface ModelServer {
  readonly address: string;
  readonly port?: number;
}

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
  /**
   * True when the provider reads `ModelRequest.outputSchema` and has the model answer in it
   * natively. A provider without it is given the schema in its instructions instead.
   */
  readonly supportsOutputSchema?: boolean;
  /** The host and port calls go to, for the `server.address` / `server.port` span attributes. */
  readonly server?: ModelServer;
  generate(request: ModelRequest, options?: { signal?: AbortSignal }): Promise<ModelResponse>;
  /**
   * The same call, streamed. Optional: a provider without it is called through `generate()`.
   * An abort of `signal` ends the iteration at once with an error named 'AbortError'; leaving the
   * loop early drops the underlying connection.
   */
  stream?(request: ModelRequest, options?: { signal?: AbortSignal }): AsyncIterable<ModelStreamChunk>;
  withOverrides?(overrides: ModelOverrides): ModelProvider;
}
