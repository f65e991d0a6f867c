/**
 * The part of an AI SDK language model (`LanguageModelV2`, `V3` or `V4` from `@ai-sdk/provider`)
 * that `aiSdkModel` uses, written out structurally: symfonic's published types never name
 * `@ai-sdk/provider`, so they compile for a user who has no AI SDK installed, while the model
 * objects of `@ai-sdk/openai`, `@ai-sdk/anthropic`, `@ai-sdk/google`… are assignable to it (a
 * type test checks V2 and V3, under `exactOptionalPropertyTypes` too). The call options are
 * written narrower than the SDK's, so what symfonic sends is always a valid call of each version.
 */

export type AiSdkJson = string | number | boolean | null | AiSdkJson[] | { [key: string]: AiSdkJson };

export type AiSdkTextPart = { type: 'text'; text: string };
export type AiSdkToolCallPart = { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown };
export type AiSdkToolResultPart = { type: 'tool-result'; toolCallId: string; toolName: string; output: { type: 'text'; value: string } };

export type AiSdkMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: AiSdkTextPart[] }
  | { role: 'assistant'; content: (AiSdkTextPart | AiSdkToolCallPart)[] }
  | { role: 'tool'; content: AiSdkToolResultPart[] };

export interface AiSdkCallOptions {
  prompt: AiSdkMessage[];
  maxOutputTokens?: number;
  temperature?: number;
  tools?: { type: 'function'; name: string; description?: string; inputSchema: object }[];
  toolChoice?: { type: 'auto' | 'required' | 'none' } | { type: 'tool'; toolName: string };
  responseFormat?: { type: 'json'; schema?: object; name?: string };
  abortSignal?: AbortSignal;
  providerOptions?: Record<string, Record<string, AiSdkJson>>;
}

/** V2 counts are numbers; V3 and V4 break them down into objects with a `total`. */
export interface AiSdkUsage {
  inputTokens: number | undefined | { total: number | undefined; cacheRead?: number | undefined };
  outputTokens: number | undefined | { total: number | undefined };
  cachedInputTokens?: number | undefined;
}

/** V2: the unified reason; V3 and V4: the unified reason and the provider's own. */
export type AiSdkFinishReason = string | { unified: string; raw: string | undefined };

/** A content part of a result, or a part of a stream: the fields read, by type. */
export interface AiSdkPart {
  readonly type: string;
  readonly text?: string;
  readonly delta?: string;
  readonly toolCallId?: string;
  readonly toolName?: string;
  readonly input?: unknown;
  readonly providerExecuted?: boolean | undefined;
  readonly id?: string | undefined;
  readonly modelId?: string | undefined;
  readonly usage?: AiSdkUsage;
  readonly finishReason?: AiSdkFinishReason;
  readonly error?: unknown;
}

export interface AiSdkGenerateResult {
  content: readonly AiSdkPart[];
  finishReason: AiSdkFinishReason;
  usage: AiSdkUsage;
  response?: { id?: string | undefined; modelId?: string | undefined } | undefined;
}

/** An AI SDK language model of specification v2 (AI SDK 5), v3 (AI SDK 6) or v4 (AI SDK 7). */
export interface AiSdkLanguageModel {
  readonly specificationVersion: 'v2' | 'v3' | 'v4';
  /** The SDK's provider id, e.g. "openai.chat", "anthropic.messages", "google.generative-ai". */
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: AiSdkCallOptions): PromiseLike<AiSdkGenerateResult>;
  doStream(options: AiSdkCallOptions): PromiseLike<{ stream: ReadableStream<AiSdkPart> }>;
}
