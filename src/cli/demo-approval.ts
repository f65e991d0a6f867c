/**
 * The approval step of `symfonic demo --suspend` / `--resume`: the fact checker (two levels below
 * the router) buys a paid report, and buying needs a person's approval, so the tree suspends
 * there. Kept apart from demo-team.ts so the plain demo's agents are untouched by it.
 */
import { z } from 'zod';
import { defineTool, type Tool } from '../tool/define-tool.js';
import type { Message, ModelRequest } from '../model/types.js';
import type { ScriptedTurn } from '../testing/scripted-model.js';

export const BUY_TOOL = 'buy_report';

/** How the fact checker says the purchase was declined, and how the researcher's notes pass it on to the brief. */
export const NOT_BOUGHT = 'The report was not bought';
export const UNBOUGHT_NOTE = 'Sales figures not checked against the full BWP report (its purchase was declined).';

/** What the fact checker asks to buy: one report at one price. */
export const REPORT = Object.freeze({ report: 'BWP heat-pump sales statistics 2023-2024 (full report)', priceUsd: 49 });

/** The fact checker's instructions when it may buy reports (what a real model reads). */
export const APPROVAL_INSTRUCTIONS =
  'You verify figures. For each figure in the task, ask `archivist` (run_agent) for the primary sources and, in the ' +
  `same turn, buy the full sales report with ${BUY_TOOL} (it costs money, so a person approves each purchase). Then ` +
  'answer with one line per figure: confirmed, corrected (give the right value) or unverifiable, and say whether the ' +
  'report was bought.';

/** A tool that spends money: every call waits for a person's approval (the run suspends until it comes). */
export function buyReportTool(): Tool {
  return defineTool({
    name: BUY_TOOL,
    description: 'Buys a paid market report and returns its key figures. Charged to the team card: a person approves each purchase.',
    input: z.object({ report: z.string().min(1), priceUsd: z.number().positive() }),
    needsApproval: true,
    // Nothing is bought: the demo's report is made up, like its figures.
    execute: ({ report, priceUsd }) =>
      `Bought "${report}" for $${priceUsd}. Key figures: 2023 sales 356,000 (+51%); 2024 sales 193,000 (-46%).`,
  });
}

/** The result of the agent's last call of `tool`, found by the call's id (a turn's results come in call order, not by name). */
export function resultOfCall(r: ModelRequest, tool: string): Message | undefined {
  const asked = r.messages.flatMap((m) => m.toolCalls ?? []).findLast((c) => c.name === tool);
  return asked === undefined ? undefined : r.messages.find((m) => m.role === 'tool' && m.toolCallId === asked.id);
}

/**
 * The fact checker's script with the purchase: turn 0 asks the archivist and buys the report in
 * one turn (the archivist's call finishes, the purchase waits); turn 1 reads how the purchase went.
 */
export function approvalScript(archivistTask: string, archivistAnswered: (r: ModelRequest) => boolean) {
  return (r: ModelRequest, turn: number): ScriptedTurn => {
    if (turn === 0) {
      return {
        toolCalls: [
          { name: 'run_agent', arguments: { name: 'archivist', task: archivistTask } },
          { name: BUY_TOOL, arguments: { ...REPORT } },
        ],
        usage: { inputTokens: 742, outputTokens: 96 },
        delayMs: 15,
      };
    }
    const bought = resultOfCall(r, BUY_TOOL);
    const declined = bought === undefined || !bought.content.startsWith('Bought');
    const why = declined ? (/The reason given: (.*)$/s.exec(bought?.content ?? '')?.[1]?.trim() ?? '') : '';
    const how = declined
      ? `${NOT_BOUGHT}${why ? ` (${why})` : ''}; checked ${archivistAnswered(r) ? 'against the sources the archivist found' : 'from what I know'}.`
      : 'Checked against the BWP report bought for $49.';
    return {
      text: `(1) confirmed; (2) confirmed; (3) confirmed, about 65% of approvals. ${how}`,
      usage: { inputTokens: 934, outputTokens: 151 },
      delayMs: 20,
    };
  };
}
