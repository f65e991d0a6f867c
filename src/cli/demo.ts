import { parseArgs } from 'node:util';
import { integerOption, negativeValuesJoined, nonNegativeOption, UsageError, urlOption, usageErrorFrom } from './args.js';
import { MAX_WIDTH, MIN_WIDTH } from './fit.js';
import { DEMO_HELP } from './help.js';
import { pauseSettings, type PauseSettings } from './demo-pause-settings.js';

const OPTIONS = {
  tenant: { type: 'string' },
  'max-depth': { type: 'string' },
  'budget-usd': { type: 'string' },
  json: { type: 'boolean' },
  width: { type: 'string' },
  html: { type: 'string' },
  otlp: { type: 'string' },
  'jaeger-url': { type: 'string' },
  provider: { type: 'string' },
  'base-url': { type: 'string' },
  model: { type: 'string' },
  'api-key': { type: 'string' },
  remote: { type: 'boolean' },
  events: { type: 'boolean' },
  suspend: { type: 'boolean' },
  resume: { type: 'string' },
  snapshot: { type: 'string' },
  decide: { type: 'string', multiple: true },
  'approve-all': { type: 'boolean' },
  turns: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface DemoSettings {
  tenantId: string;
  maxAgentDepth: number;
  budgetUsd: number | undefined;
  json: boolean;
  /** Columns the picture fits, from --width; undefined: $COLUMNS, else the terminal's, else 80. */
  width: number | undefined;
  /** --html: the file the web page of the tree is written to. */
  html?: string | undefined;
  /** OTLP base URL, without "/v1/traces". */
  otlp: string | undefined;
  jaegerUrl: string;
  /** Set for --provider openai-compatible. */
  openAI: { baseURL: string; model: string; apiKey: string | undefined } | undefined;
  /** --remote: the fact checker runs in a second process, reached over A2A. */
  remote: boolean;
  /** --events: every event of the run as one JSON line on stdout; the picture goes to stderr. */
  events: boolean;
  /** --suspend / --resume FILE: the tree waits for an approval, written to a file, and goes on from it. */
  pause?: PauseSettings | undefined;
  /** --turns N: the root answers N turns of one session (1: a single run, no session). */
  turns?: number | undefined;
}

export function demoSettings(args: string[]): DemoSettings | 'help' {
  let v: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; strict: true }>>['values'];
  try {
    v = parseArgs({ args: negativeValuesJoined(args, OPTIONS), options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw usageErrorFrom('demo', error);
  }
  if (v.help) return 'help';
  const pause = pauseSettings(v);
  const tenantId = v.tenant ?? 'demo';
  if (tenantId.trim() === '') throw new UsageError('--tenant must not be empty', 'demo');
  const maxAgentDepth = v['max-depth'] === undefined ? 2 : integerOption('demo', '--max-depth', v['max-depth'], 0, 32);
  const width = v.width === undefined ? undefined : integerOption('demo', '--width', v.width, MIN_WIDTH, MAX_WIDTH);
  if (v.html !== undefined && v.html.trim() === '') throw new UsageError('--html needs a file name, e.g. --html tree.html', 'demo');
  const budgetUsd = v['budget-usd'] === undefined ? undefined : nonNegativeOption('demo', '--budget-usd', v['budget-usd']);
  // A full traces URL is accepted too: people paste the one their collector documents.
  const otlp = v.otlp === undefined ? undefined : urlOption('demo', '--otlp', v.otlp, 'http://localhost:4318').href.replace(/\/v1\/traces\/?$/, '').replace(/\/+$/, '');
  const jaegerUrl = urlOption('demo', '--jaeger-url', v['jaeger-url'] ?? 'http://localhost:16686', 'http://localhost:16686').href.replace(/\/+$/, '');
  const provider = v.provider ?? 'scripted';
  let openAI: DemoSettings['openAI'];
  if (provider === 'openai-compatible') {
    if (v['base-url'] === undefined || v.model === undefined) {
      throw new UsageError('--provider openai-compatible needs --base-url URL and --model NAME', 'demo');
    }
    const baseURL = urlOption('demo', '--base-url', v['base-url'], 'http://localhost:11434/v1').href.replace(/\/+$/, '');
    if (v.model.trim() === '') throw new UsageError('--model must not be empty', 'demo');
    openAI = { baseURL, model: v.model, apiKey: v['api-key'] };
  } else if (provider === 'scripted') {
    const stray = (['base-url', 'model', 'api-key'] as const).filter((k) => v[k] !== undefined);
    if (stray.length > 0) throw new UsageError(`${stray.map((k) => `--${k}`).join(', ')} only apply with --provider openai-compatible`, 'demo');
  } else {
    throw new UsageError(`unknown provider "${provider}": use "scripted" or "openai-compatible"`, 'demo');
  }
  const turns = v.turns === undefined ? 1 : integerOption('demo', '--turns', v.turns, 1, 5);
  if (turns > 1 && pause !== undefined) throw new UsageError('--turns runs a conversation start to end: it does not combine with --suspend or --resume', 'demo');
  if (v.events === true && v.json === true) throw new UsageError('--events and --json both print to stdout: use one', 'demo');
  return { tenantId, maxAgentDepth, budgetUsd, json: v.json === true, width, html: v.html, otlp, jaegerUrl, openAI, remote: v.remote === true, events: v.events === true, pause, turns };
}

export async function demoCommand(args: string[]): Promise<number> {
  const settings = demoSettings(args);
  if (settings === 'help') {
    process.stdout.write(DEMO_HELP);
    return 0;
  }
  // The agents and the SDK load only once the arguments are known to be good.
  const { runDemo } = await import('./demo-run.js');
  return runDemo(settings);
}
