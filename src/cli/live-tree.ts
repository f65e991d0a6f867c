/**
 * The live tree `symfonic demo` draws, for anyone's runs: `liveTree()` is an `onEvent` listener,
 * `renderRunEvents()` reads a stream (`agent.stream(...)` or any AsyncIterable of RunEvents).
 */
import { z } from 'zod';
import type { RunEvent } from '../agent/run-events.js';
import { ConfigurationError } from '../core/errors.js';
import type { TimedRunNode } from '../trace/run-tree.js';
import { EventTree } from './event-tree.js';
import { terminalWidth } from './fit.js';
import { jsonRunNode, type RunTreeNode } from './json-tree.js';

export type { RunTreeNode } from './json-tree.js';
import { renderRunTree, summaryLine } from './render-tree.js';
import { colorWanted, style } from './style.js';
import { terminalText } from './terminal-text.js';

export interface LiveTreeOptions {
  /** Where the picture goes. Default: standard output. */
  write?: (text: string) => void;
  /**
   * Redraw the tree in place (ANSI cursor movement) as events arrive, then leave the final
   * picture; false draws only the final picture, when the tree has ended or on close(). Default:
   * true when drawing to standard output on a terminal, else false.
   */
  live?: boolean;
  /** Columns the picture fits. Default: $COLUMNS, else the terminal's width, else 80. */
  width?: number;
  /** ANSI colour. Default: when drawing to standard output on a terminal without NO_COLOR. */
  color?: boolean;
}

/** An `onEvent` listener that draws the tree; close() stops redrawing and leaves the final picture. */
export interface LiveTree {
  (event: RunEvent): void;
  /** The tree so far, with every figure the picture shows (as `symfonic tree --json` prints it), or undefined before the first run starts. */
  tree(): RunTreeNode | undefined;
  /** Stops redrawing and draws the final picture (once; later events are ignored). */
  close(): void;
}

const REDRAW_MS = 80;

const optionsSchema = z.strictObject({
  write: z.custom<(text: string) => void>((v) => typeof v === 'function', 'must be a function (text: string) => void').optional(),
  live: z.boolean('must be true or false').optional(),
  width: z.int('must be a whole number').min(40, 'must be at least 40').max(1000, 'must be at most 1000').optional(),
  color: z.boolean('must be true or false').optional(),
});

interface Sink {
  write(text: string): unknown;
}

/**
 * The drawing loop over an EventTree: each frame replaces the last in place (cursor up over its
 * lines, clear to the end of the screen), and a timer grows the bars of runs still going. Frames
 * are fitted to the width, so no line wraps and the cursor arithmetic holds.
 */
export class TreeFrames {
  readonly events = new EventTree();
  private lines = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  frames = 0;

  constructor(
    private readonly out: Sink,
    private readonly options: { color: boolean; width: number; live: boolean },
  ) {}

  add(e: RunEvent): void {
    const wasStarted = this.events.started;
    this.events.add(e);
    if (!this.options.live) return;
    if (!wasStarted && this.events.started && this.timer === undefined) {
      this.timer = setInterval(() => this.draw(), REDRAW_MS);
      this.timer.unref?.();
    }
    // Frames follow what changes the rows; the timer alone grows the bars.
    if (e.type === 'run.started' || e.type === 'delegation.finished' || e.type === 'run.finished' || e.type === 'run.failed' || (e.type as string) === 'run.suspended' || (e.type as string) === 'run.resumed' || (e.type as string) === 'budget.threshold') this.draw();
  }

  snapshot(now = Date.now()): TimedRunNode | undefined {
    return this.events.snapshot(now);
  }

  /** The picture of the tree now: the rows, the summary and budget notes (no trace id: events carry none). */
  frame(now = Date.now()): string[] {
    const root = this.events.snapshot(now);
    if (!root) return [];
    const st = style(this.options.color);
    return [...renderRunTree(root, this.options).slice(0, -1), summaryLine(root, this.options), ...this.events.notes.map((n) => st.yellow(terminalText(n)))];
  }

  draw(now = Date.now()): void {
    const frame = this.frame(now);
    if (frame.length === 0) return;
    this.out.write(this.clearing() + frame.join('\n') + '\n');
    this.lines = frame.reduce((k, l) => k + l.split('\n').length, 0);
    this.frames++;
  }

  /** Stops redrawing and clears the last frame (the demo draws its final picture from the trace). */
  close(): void {
    this.stop();
    if (this.lines > 0) this.out.write(this.clearing());
    this.lines = 0;
  }

  /** Stops redrawing and draws the final picture in place of the last frame. */
  finish(): void {
    this.stop();
    this.draw();
    this.lines = 0;
  }

  private stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private clearing(): string {
    // Up to the first line of the last frame (CPL), then erase to the end of the screen (ED).
    return this.lines > 0 ? `\u001b[${this.lines}F\u001b[J` : '';
  }
}

function settings(options: LiveTreeOptions): { out: Sink; color: boolean; width: number; live: boolean } {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new ConfigurationError(`liveTree options: ${z.prettifyError(parsed.error)}. Example: liveTree({ write: (t) => process.stderr.write(t), width: 100 }).`);
  }
  const toStdout = options.write === undefined;
  const write = options.write;
  return {
    out: write ? { write: (t: string) => write(t) } : process.stdout,
    color: options.color ?? (toStdout && colorWanted(process.stdout)),
    width: options.width ?? terminalWidth(process.stdout),
    live: options.live ?? (toStdout && process.stdout.isTTY === true),
  };
}

/**
 * A listener for `RunOptions.onEvent` that draws the delegation tree of the run: live (redrawn
 * in place as runs start, delegate, pause and end) on a terminal, else once when the root ends.
 * Call close() when the run is over (it draws the final picture if the root never ended, e.g.
 * when it suspended).
 */
export function liveTree(options: LiveTreeOptions = {}): LiveTree {
  const s = settings(options);
  const frames = new TreeFrames(s.out, s);
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    frames.finish();
  };
  const listener = (event: RunEvent) => {
    if (closed) return;
    frames.add(event);
    if (frames.events.ended) close();
  };
  const tree = () => {
    const root = frames.snapshot();
    return root === undefined ? undefined : jsonRunNode(root);
  };
  return Object.assign(listener, { tree, close });
}

/**
 * Draws the tree of a run from its events as they arrive (`agent.stream(...)` or any
 * AsyncIterable of RunEvents) and resolves with the final tree once the stream ends. It reads
 * the stream to its end, so the run is not aborted; `await stream.result` afterwards for the answer.
 */
export async function renderRunEvents(events: AsyncIterable<RunEvent>, options: LiveTreeOptions = {}): Promise<RunTreeNode | undefined> {
  if (events === null || typeof (events as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] !== 'function') {
    throw new TypeError('renderRunEvents takes an AsyncIterable of RunEvents, e.g. agent.stream(query)');
  }
  const tree = liveTree(options);
  try {
    for await (const event of events) tree(event);
  } finally {
    tree.close();
  }
  return tree.tree();
}
