import type { RunEvent } from '../agent/run-events.js';
import type { DemoSettings } from './demo.js';
import { terminalWidth } from './fit.js';
import { TreeFrames } from './live-tree.js';
import { colorWanted } from './style.js';

/** What the demo passes to its root run, and what it calls once the run has settled. */
export interface DemoObserver {
  readonly options: { onEvent?: (event: RunEvent) => void };
  close(): void;
}

interface Out {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

const NONE: DemoObserver = Object.freeze({ options: Object.freeze({}), close() {} });

/**
 * The demo's tree drawn while it runs (see TreeFrames, which liveTree() shares); `close()`
 * clears the last frame, so the final picture, drawn from the trace as off a terminal, stands alone.
 */
export class LiveTree extends TreeFrames {
  constructor(out: Out, options: { color: boolean; width: number }) {
    super(out, { ...options, live: true });
  }
}

/**
 * How `symfonic demo` follows its run: `--events` prints every event as one JSON line on stdout;
 * on a terminal the tree is drawn live; off a terminal nothing is drawn until the final picture.
 */
export function demoObserver(s: DemoSettings & { events?: boolean }, out: Out = process.stdout): DemoObserver {
  if (s.events === true) return { options: { onEvent: (e) => void out.write(JSON.stringify(e) + '\n') }, close() {} };
  if (s.json || out.isTTY !== true) return NONE;
  const live = new LiveTree(out, { color: colorWanted(out), width: s.width ?? terminalWidth(out) });
  return { options: { onEvent: (e) => live.add(e) }, close: () => live.close() };
}
