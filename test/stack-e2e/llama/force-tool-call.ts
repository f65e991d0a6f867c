/**
 * What a user of llama-server 0.3.36 has to do, through openAICompatible's public `fetch` option,
 * to make a weak model call a tool when symfonic asks for a forced choice. Measured on SmolLM2-135M:
 *
 * - The server's own grammar for `tool_choice: "required"` (Qwen2.5 template) is
 *   `root ::= "<|im_start|>assistant\n" space until-"<tool_call>"? tool-calls`: free text may come
 *   first, and the model writes text until max_tokens, never reaching a call.
 * - A custom GBNF `grammar` cannot replace it: with `tools` and a tool_choice other than "none"
 *   the server refuses the request (HTTP 400 "Cannot use custom grammar constraints with tools.").
 *   With "none" it takes the grammar, but no longer parses `<tool_call>` into `tool_calls`: the
 *   call comes back as plain content, which no client dispatches.
 * - What works: keep "required" (so the server's tool-call grammar and Hermes parser stay on) and
 *   end the messages with an assistant prefill `<tool_call>\n`, which the server continues (its
 *   continue_final_message). The free text is then behind the model, the grammar forces the call's
 *   JSON, and the server answers a real `tool_calls` entry, `finish_reason: "tool_calls"`.
 * - The grammar lets call follow call, and this model writes `<tool_call>` after `<tool_call>`
 *   until max_tokens (the server ignores `parallel_tool_calls: false` here); a `stop` at
 *   `</tool_call>` ends the answer after the first call, which the server's parser still takes.
 * - The server reads `tool_choice` only as a string: OpenAI's object form for a named tool, which
 *   symfonic sends, is logged "Wrong type supplied for parameter 'tool_choice'" and taken as
 *   "auto" (where a prefill makes the server's parser fail with HTTP 500). A named choice reaches
 *   this server as "required" with that tool alone in `tools`.
 *
 * The prefill is added only where symfonic forces a choice, so later turns are left as sent.
 */
export type Body = Record<string, unknown> & { messages: unknown[]; tools?: { function: { name: string } }[] };

export const PREFILL = { role: 'assistant', content: '<tool_call>\n' } as const;
const END = '</tool_call>';

/** The body llama-server is sent for one that symfonic sent; unforced bodies pass as they are. */
export function forcedForLlama(body: Body): Body {
  const choice = body['tool_choice'];
  if (choice === 'required') return { ...body, stop: [END], messages: [...body.messages, PREFILL] };
  if (typeof choice === 'object' && choice !== null) {
    const name = (choice as { function: { name: string } }).function.name;
    const tools = (body.tools ?? []).filter((t) => t.function.name === name);
    return { ...body, tool_choice: 'required', tools, stop: [END], messages: [...body.messages, PREFILL] };
  }
  return body;
}

/** A fetch that sends llama-server the forced form of each body, keeping what it sent in `sent`. */
export function forcingFetch(sent: Body[] = []): { fetch: typeof fetch; sent: Body[] } {
  const forcing: typeof fetch = async (input, init) => {
    if (typeof init?.body !== 'string') return fetch(input, init);
    const body = forcedForLlama(JSON.parse(init.body) as Body);
    sent.push(body);
    return fetch(input, { ...init, body: JSON.stringify(body) });
  };
  return { fetch: forcing, sent };
}
