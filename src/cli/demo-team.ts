import { FrameworkConfig } from '../agent/framework-config.js';
import { SymfonicAgent } from '../agent/symfonic-agent.js';
import type { ChildAgent } from '../delegation/child.js';
import { SubAgent, SubAgentSpec } from '../delegation/sub-agent.js';
import type { Message, ModelProvider, ModelRequest } from '../model/types.js';
import type { MetricsCollector } from '../accounting/metrics-collector.js';
import type { SessionStore } from '../session/session-store.js';
import { priceTable, type ModelPrice } from '../accounting/prices.js';
import { scriptedModel, type ScriptedTurn } from '../testing/scripted-model.js';
import { APPROVAL_INSTRUCTIONS, approvalScript, buyReportTool, NOT_BOUGHT, resultOfCall, UNBOUGHT_NOTE } from './demo-approval.js';

/**
 * The bundled delegation tree of `symfonic demo`:
 *
 *   router ──┬─ researcher ── fact_checker ── archivist   (refused at the default depth 2)
 *            ├─ analyst       (started in the same turn as researcher)
 *            └─ writer
 *
 * On the scripted models every agent plays its own short script, chosen by how far its own run
 * has got, so concurrent runs never take each other's turns and the tree is the same every time.
 * The instructions are what a real model reads with --provider openai-compatible.
 */

export const DEMO_QUESTION =
  'Write a short brief on the residential heat-pump market in Germany: recent sales, what drives and what holds back ' +
  'adoption, and the main risks for the next three years.';

/** demo --turns: the questions of turns 2 to 5, each following up the answer before it. */
export const DEMO_FOLLOW_UPS: readonly string[] = [
  'Which of the risks in that brief matters most, and why?',
  'Say that again in one sentence for a slide.',
  'What would change your answer?',
  'Thank you. Anything else to watch?',
];

export const DEMO_LARGE = 'demo-large';
export const DEMO_SMALL = 'demo-small';

/** Made-up but plausible USD per million tokens: a frontier-class and a small model. */
export const DEMO_PRICES: Readonly<Record<string, ModelPrice>> = Object.freeze({
  [DEMO_LARGE]: { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3 },
  [DEMO_SMALL]: { inputPerMTok: 0.25, outputPerMTok: 1.25, cacheReadPerMTok: 0.025 },
});

export const demoPrices = () => priceTable({ ...DEMO_PRICES });

const INSTRUCTIONS = {
  router:
    'You coordinate a small research team and never research or write yourself. For a request: in ONE turn, call ' +
    'run_agent twice so both work at once: `researcher` for facts and figures, `analyst` for drivers and risks. Then ' +
    'call run_agent once for `writer`, pasting everything researcher and analyst returned into the task. Finally answer ' +
    "with the writer's brief, unchanged.",
  researcher:
    'You find facts and figures and cite where each comes from. Before answering, call run_agent once for ' +
    '`fact_checker` with the two or three figures that matter most, listed in the task. Then answer with the figures as ' +
    'a short list, marking each as verified or unverified according to the fact checker.',
  fact_checker:
    'You verify figures. For each figure in the task, first ask `archivist` (run_agent) for the primary sources. If ' +
    'the archivist is not available, check the figures from what you know. Answer with one line per figure: ' +
    'confirmed, corrected (give the right value) or unverifiable.',
  archivist: 'You retrieve primary sources (statistics offices, industry associations, laws) for the claims in the task, one line each.',
  analyst:
    'You analyse markets. Answer with at most three drivers and a ranked list of at most three risks, one sentence ' +
    'each, without figures you are not sure of.',
  writer:
    'You write briefs for busy readers. Using only the notes in the task, write one paragraph of at most 120 words. ' +
    'Keep figures as given; say so plainly where a figure is unverified.',
};

// Illustrative figures, in the shape a researcher would report them; scripted, not looked up.
const FIGURES =
  '(1) about 356,000 heat pumps sold in Germany in 2023, +51% on 2022; (2) about 193,000 sold in 2024, −46%; ' +
  '(3) heat pumps as primary heating in about 65% of new residential buildings approved in 2023.';

const ARCHIVIST_TASK = 'Find the primary sources for: BWP heat-pump sales 2023 and 2024; Destatis share of heat pumps in new residential buildings approved in 2023.';

const turnOf = (r: ModelRequest) => r.messages.filter((m) => m.role === 'assistant').length;
const toolResults = (r: ModelRequest): Message[] => r.messages.filter((m) => m.role === 'tool');
const wasRefused = (m: Message | undefined) => m !== undefined && /refused|could not run|failed|no sub-agent/i.test(m.content);

/** A scripted model for one agent: `play` picks the turn from the agent's own conversation. */
function scripted(modelName: string, play: (request: ModelRequest, turn: number) => ScriptedTurn): ModelProvider {
  return scriptedModel((request) => inPieces(play(request, turnOf(request))), { providerName: 'scripted', modelName });
}

/** A turn's text streamed word by word (when someone listens, as the live view does); run() gets it whole. */
function inPieces(turn: ScriptedTurn): ScriptedTurn {
  if (typeof turn !== 'object' || turn instanceof Error || !turn.text || turn.chunks) return turn;
  return { ...turn, chunks: turn.text.split(/(?<= )/), chunkDelayMs: 4 };
}

/**
 * A later turn of a session (demo --turns): the router answers from the conversation alone,
 * quoting the start of its previous answer, which it can read only from the session's history.
 */
function followUp(r: ModelRequest): ScriptedTurn {
  const lastUser = r.messages.map((m) => m.role).lastIndexOf('user');
  const earlier = r.messages.slice(0, lastUser).filter((m) => m.role === 'assistant' && m.content.trim() !== '').at(-1);
  const quoted = earlier?.content.split(/(?<=[.!?])\s/)[0];
  return {
    text: quoted === undefined
      ? 'There is no earlier answer in this conversation to follow up on.'
      : `Following up on my previous answer ("${quoted}"): policy uncertainty matters most, as it stalls orders before prices or installers can.`,
    usage: { inputTokens: 3120, outputTokens: 88, cacheReadInputTokens: 2560 },
    delayMs: 20,
  };
}

const SCRIPTS = {
  router: (r: ModelRequest, turn: number): ScriptedTurn => {
    if (r.messages.filter((m) => m.role === 'user').length > 1) return followUp(r);
    if (turn === 0) {
      return {
        text: 'Gathering figures and an analysis in parallel.',
        toolCalls: [
          { name: 'run_agent', arguments: { name: 'researcher', task: 'Collect recent figures for the German residential heat-pump market: annual unit sales for 2023 and 2024 and the heat-pump share in new residential buildings. Cite sources.' } },
          { name: 'run_agent', arguments: { name: 'analyst', task: 'What drives and what holds back residential heat-pump adoption in Germany over the next three years (subsidies, the Buildings Energy Act, electricity vs gas prices, installers)? Rank the risks.' } },
        ],
        usage: { inputTokens: 1412, outputTokens: 164 },
        delayMs: 30,
      };
    }
    if (turn === 1) {
      const notes = toolResults(r).map((m) => m.content).join('\n\n');
      return {
        toolCalls: [{ name: 'run_agent', arguments: { name: 'writer', task: `Write a brief of at most 120 words on the German residential heat-pump market from these notes:\n\n${notes}` } }],
        usage: { inputTokens: 2216, outputTokens: 231, cacheReadInputTokens: 1280 },
        delayMs: 25,
      };
    }
    const brief = toolResults(r).at(-1);
    return {
      text: brief && !wasRefused(brief) ? brief.content : 'The writer was not available; the notes above are the answer.',
      usage: { inputTokens: 2689, outputTokens: 196, cacheReadInputTokens: 2048 },
      delayMs: 30,
    };
  },
  researcher: (r: ModelRequest, turn: number): ScriptedTurn => {
    if (turn === 0) {
      return {
        toolCalls: [{ name: 'run_agent', arguments: { name: 'fact_checker', task: `Verify these figures and say which are confirmed: ${FIGURES}` } }],
        usage: { inputTokens: 905, outputTokens: 122 },
        delayMs: 20,
      };
    }
    const check = toolResults(r).at(-1);
    const checked = !wasRefused(check);
    // demo --resume with a declined purchase: the notes say so, and the brief passes it on.
    const unbought = check !== undefined && check.content.includes(NOT_BOUGHT) ? ` ${UNBOUGHT_NOTE}` : '';
    return {
      text: `Figures (${checked ? 'verified by fact_checker' : 'unverified: fact checking was not available'}): ${FIGURES} Sources: BWP (German heat pump association) annual sales; Destatis building permits.${unbought}`,
      usage: { inputTokens: 1164, outputTokens: 187 },
      delayMs: 25,
    };
  },
  fact_checker: (r: ModelRequest, turn: number): ScriptedTurn => {
    if (turn === 0) {
      return {
        toolCalls: [{ name: 'run_agent', arguments: { name: 'archivist', task: ARCHIVIST_TASK } }],
        usage: { inputTokens: 688, outputTokens: 74 },
        delayMs: 15,
      };
    }
    const sourced = !wasRefused(toolResults(r).at(-1));
    return {
      text: `(1) confirmed; (2) confirmed; (3) confirmed, about 65% of approvals. ${sourced ? 'Checked against the sources the archivist found.' : 'The archivist was not available; checked from what I know.'}`,
      usage: { inputTokens: 861, outputTokens: 143 },
      delayMs: 20,
    };
  },
  archivist: (): ScriptedTurn => ({
    text: 'BWP press release "Absatzzahlen 2023" and "Absatzzahlen 2024"; Destatis, building permits 2023, table 31111.',
    usage: { inputTokens: 402, outputTokens: 58 },
    delayMs: 15,
  }),
  analyst: (): ScriptedTurn => ({
    text:
      'Drivers: federal subsidies of up to 70% of the cost; the Buildings Energy Act pushing renewable heating; falling heat-pump prices. ' +
      'Risks, ranked: (1) policy uncertainty after the 2023 heating-law dispute stalls orders; (2) electricity remains expensive relative to gas; ' +
      '(3) too few trained installers.',
    usage: { inputTokens: 540, outputTokens: 402 },
    delayMs: 60,
  }),
  writer: (r: ModelRequest): ScriptedTurn => ({
    text:
      (r.messages[0]?.content.includes(UNBOUGHT_NOTE) ? `${UNBOUGHT_NOTE} ` : '') +
      "Germany's residential heat-pump market boomed in 2023 with about 356,000 units sold, then fell by nearly half to about 193,000 in 2024 " +
      'as the dispute over the heating law unsettled buyers. Heat pumps already heat about two thirds of newly approved homes, and subsidies ' +
      'of up to 70% plus the Buildings Energy Act support a recovery. The main risks for the next three years are policy uncertainty, ' +
      'electricity prices that stay high relative to gas, and a shortage of trained installers.',
    usage: { inputTokens: 798, outputTokens: 236 },
    delayMs: 45,
  }),
};

export interface DemoTeamOptions {
  maxAgentDepth: number;
  metricsCollector: MetricsCollector;
  /** A real model for every agent; absent, each agent plays its script on demo-large or demo-small. */
  provider?: ModelProvider;
  /** The researcher's fact checker when it runs elsewhere (demo --remote); absent, the local one. */
  factChecker?: ChildAgent;
  /**
   * demo --suspend / --resume: the fact checker also buys a report with a tool that needs
   * approval, and the root signs its snapshots with this key.
   */
  approval?: { snapshotKey: string };
  /** demo --turns: the root keeps its conversation here, so each turn reads the ones before. */
  sessions?: SessionStore;
}

export interface DemoTeam {
  root: SymfonicAgent;
  /** The team's own fact checker (the one demo --remote serves from a second process). */
  factChecker: SymfonicAgent;
  close(): Promise<void>;
}

export function demoTeam(options: DemoTeamOptions): DemoTeam {
  const real = options.provider;
  const model = (name: keyof typeof SCRIPTS, size: string) => real ?? scripted(size, SCRIPTS[name]);
  const approval = options.approval;
  const archivistAnswered = (r: ModelRequest) => !wasRefused(resultOfCall(r, 'run_agent'));
  // Answers stay short, which also keeps each call's budget reservation small; the researcher
  // may write long notes, so a tight budget refuses it first.
  const config = new FrameworkConfig({ agent: { maxAgentDepth: options.maxAgentDepth }, model: { maxTokens: 1024 } });
  const collector = options.metricsCollector;

  const factChecker = new SymfonicAgent({
    name: 'fact_checker',
    modelProvider: approval && !real ? scripted(DEMO_SMALL, approvalScript(ARCHIVIST_TASK, archivistAnswered)) : model('fact_checker', DEMO_SMALL),
    instructions: approval ? APPROVAL_INSTRUCTIONS : INSTRUCTIONS.fact_checker,
    ...(approval ? { tools: [buyReportTool()] } : {}),
    config: FrameworkConfig.child(config, { name: 'fact_checker' }),
    metricsCollector: collector,
    subAgents: [
      new SubAgentSpec({
        name: 'archivist',
        description: 'Retrieves primary sources for claims.',
        whenToUse: 'When a figure needs its original source.',
        instructions: INSTRUCTIONS.archivist,
        ...(real ? {} : { modelProvider: model('archivist', DEMO_SMALL) }),
      }),
    ],
  });
  const researcher = new SymfonicAgent({
    name: 'researcher',
    modelProvider: model('researcher', DEMO_LARGE),
    instructions: INSTRUCTIONS.researcher,
    config: FrameworkConfig.child(config, { name: 'researcher', maxTokens: 4096 }),
    metricsCollector: collector,
    subAgents: [
      new SubAgent({
        name: 'fact_checker',
        agent: options.factChecker ?? factChecker,
        description: 'Verifies figures and corrects wrong ones.',
        whenToUse: 'Before reporting any figure.',
      }),
    ],
  });
  const root = new SymfonicAgent({
    name: 'router',
    modelProvider: model('router', DEMO_LARGE),
    instructions: INSTRUCTIONS.router,
    description: 'Splits a request between the team and returns the brief.',
    config,
    ...(approval ? { snapshotKey: approval.snapshotKey } : {}),
    ...(options.sessions ? { sessions: options.sessions } : {}),
    metricsCollector: collector,
    subAgents: [
      new SubAgent({
        name: 'researcher',
        agent: researcher,
        description: 'Finds facts and figures, with sources, and has them fact-checked.',
        whenToUse: 'For any figure or fact the answer needs.',
      }),
      new SubAgentSpec({
        name: 'analyst',
        description: 'Explains what drives and what holds back a market, and ranks risks.',
        whenToUse: 'For drivers, obstacles and risks.',
        instructions: INSTRUCTIONS.analyst,
        ...(real ? {} : { modelProvider: model('analyst', DEMO_SMALL) }),
      }),
      new SubAgentSpec({
        name: 'writer',
        description: 'Turns notes into a short brief.',
        whenToUse: 'Last, with all the notes pasted into the task.',
        instructions: INSTRUCTIONS.writer,
        ...(real ? {} : { modelProvider: model('writer', DEMO_SMALL) }),
      }),
    ],
  });
  return {
    root,
    factChecker,
    async close() {
      await Promise.all([root.close(), researcher.close(), factChecker.close()]);
    },
  };
}
