import { z } from 'zod';
import type { RunFrame } from '../run/run-frame.js';
import { defineTool, type Tool } from '../tool/define-tool.js';
import type { ToolContext } from '../tool/tool-context.js';

/** A question nobody answers now: the run suspends until an answer comes with agent.resume. */
export class Question {
  constructor(readonly question: string) {}
}

/**
 * The `ask_user` tool of an agent with askUserEnabled. The question goes to the askUser handler
 * the root's run options gave (children inherit it through their frame); with no handler, the
 * tree suspends and the answer comes back as a decision. It is refused with a message the model
 * reads when the run has no scope (a question must reach a tenant's user, and a child must not
 * ask on behalf of nobody).
 */
export function askUserTool(agentName: string): Tool {
  return defineTool({
    name: 'ask_user',
    description: 'Ask the user a question and wait for the answer. Use it only when you cannot go on without information only the user has.',
    input: z.object({ question: z.string().min(1).describe('The question, complete and self-contained.') }),
    execute: async ({ question }, ctx: ToolContext & { frame?: RunFrame }) => {
      const askUser = ctx.frame?.askUser;
      if (ctx.scope === undefined) {
        return `ask_user refused: this run has no scope, so there is no user to ask. Go on without the answer, or say what you need.`;
      }
      if (askUser === undefined) return new Question(question);
      const answer = await askUser(question, { runId: ctx.runId, agent: agentName, scope: ctx.scope });
      return typeof answer === 'string' ? answer : String(answer);
    },
  });
}
