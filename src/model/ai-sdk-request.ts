/** A ModelRequest as the call options of an AI SDK language model (its standardized prompt). */
import { ConfigurationError } from '../core/errors.js';
import type { AiSdkCallOptions, AiSdkJson, AiSdkMessage, AiSdkToolCallPart } from './ai-sdk-types.js';
import type { CallSettings } from './provider-shell.js';
import { strictSchema } from './strict-schema.js';
import type { ModelRequest, ToolCall } from './types.js';
import { argumentsObject, toolCallIdOf } from './wire.js';

export interface CallExtras {
  nativeOutput: boolean;
  providerOptions: Record<string, Record<string, AiSdkJson>> | undefined;
  signal: AbortSignal | undefined;
}

export function callOptions(request: ModelRequest, settings: CallSettings, extras: CallExtras): AiSdkCallOptions {
  const options: AiSdkCallOptions = { prompt: promptOf(request) };
  if (settings.maxTokens !== undefined) options.maxOutputTokens = settings.maxTokens;
  if (settings.temperature !== undefined) options.temperature = settings.temperature;
  if (request.tools.length > 0) {
    options.tools = request.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, inputSchema: t.parameters }));
    const choice = request.toolChoice;
    if (choice !== undefined) options.toolChoice = typeof choice === 'string' ? { type: choice } : { type: 'tool', toolName: choice.name };
  }
  if (request.outputSchema && extras.nativeOutput) {
    // The strict-ready form where there is one: OpenAI's AI SDK provider sends strict mode by
    // default, and closing objects or dropping refused keywords changes no answer accepted.
    const strict = strictSchema(request.outputSchema.schema);
    options.responseFormat = { type: 'json', name: request.outputSchema.name, schema: strict.strict ? strict.schema : request.outputSchema.schema };
  }
  if (extras.providerOptions !== undefined) options.providerOptions = extras.providerOptions;
  if (extras.signal !== undefined) options.abortSignal = extras.signal;
  return options;
}

function promptOf(request: ModelRequest): AiSdkMessage[] {
  const prompt: AiSdkMessage[] = [];
  if (request.instructions) prompt.push({ role: 'system', content: request.instructions });
  // A tool result names its tool in this format: the name comes from the call it answers.
  const toolNames = new Map<string, string>();
  request.messages.forEach((m, i) => {
    if (m.role === 'user') {
      prompt.push({ role: 'user', content: [{ type: 'text', text: m.content }] });
    } else if (m.role === 'assistant') {
      const calls = (m.toolCalls ?? []).map((call) => toolCallPart(call, toolNames));
      prompt.push({ role: 'assistant', content: [...(m.content === '' && calls.length > 0 ? [] : [{ type: 'text' as const, text: m.content }]), ...calls] });
    } else {
      const toolCallId = toolCallIdOf(m, i);
      const toolName = toolNames.get(toolCallId);
      if (toolName === undefined) {
        throw new ConfigurationError(
          `messages[${i}] answers tool call "${toolCallId}", which no earlier assistant message made: ` +
            `a tool result must follow the assistant message whose toolCalls hold its id.`,
        );
      }
      prompt.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId, toolName, output: { type: 'text', value: m.content } }] });
    }
  });
  return prompt;
}

function toolCallPart(call: ToolCall, toolNames: Map<string, string>): AiSdkToolCallPart {
  toolNames.set(call.id, call.name);
  return { type: 'tool-call', toolCallId: call.id, toolName: call.name, input: argumentsObject(call.arguments) ?? {} };
}
