/**
 * What `symfonic demo --suspend` (and a resume that suspends again) tells its reader: each
 * interruption with who waits and for what, the files written, and the command that resumes the
 * tree; and the same as data for --json.
 */
import type { Interruption } from '../run/interruption.js';
import { firstDecision, takes, toldText } from '../run/interruption-kinds.js';
import { cliVerb } from './demo-pause-settings.js';
import { wrapText } from './fit.js';
import { symfonicCommand } from './invocation.js';
import type { Style } from './style.js';

/** A suspension written down: where, how large, and what it waits on. */
export interface WrittenSuspension {
  readonly file: string;
  readonly traceFile: string;
  /** The snapshot's size: the bytes of its JSON, as written. */
  readonly bytes: number;
  readonly interruptions: readonly Interruption[];
}

/** "fact_checker (depth 2) asks to run buy_report {…}", and the like for questions and budgets. */
function what(i: Interruption): string {
  return toldText(i.kind, `${i.agent} (depth ${i.depth})`, i);
}

/** Quoted for a POSIX shell when it holds anything but safe characters. */
const shellWord = (s: string) => (/^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);

/** `text` wrapped to `width`, its first line after `first`, the others after `rest`. */
export const indented = (text: string, width: number, first: string, rest: string) =>
  wrapText(text, Math.max(20, width - rest.length)).map((l, k) => (k === 0 ? first : rest) + l);

/** The lines under the picture of a suspended tree. */
export function suspensionLines(w: WrittenSuspension, st: Style, width: number): string[] {
  const n = w.interruptions.length;
  const lines = [st.yellow(`paused: ${n === 1 ? 'an interruption waits' : `${n} interruptions wait`} for a decision`)];
  for (const i of w.interruptions) {
    lines.push(...indented(what(i), width, '  ', '    '), `    ${st.dim('id')} ${i.id} ${st.dim(`(${i.kind})`)}`);
  }
  lines.push(...indented(`wrote ${w.file} (${w.bytes.toLocaleString('en-US')} bytes, signed) and ${w.traceFile}`, width, '', '  '));
  lines.push('resume it, in this process or any other:');
  const decides = w.interruptions.map((i) => `--decide ${i.id}=${cliVerb(firstDecision(i.kind))}`);
  const parts = [`${symfonicCommand()} demo --resume ${shellWord(w.file)}`, ...decides];
  parts.forEach((p, k) => lines.push(`${k === 0 ? '  ' : '    '}${p}${k < parts.length - 1 ? ' \\' : ''}`));
  if (w.interruptions.some((i) => takes(i.kind, 'approve'))) {
    lines.push(...indented("or decline with --decide 'ID=decline:REASON' (the model reads why); --approve-all approves every approval", width, '', ''));
  }
  return lines;
}

/** What the reader is told after the picture: the suspension, or how the file was settled. */
export function pauseLines(p: { written?: WrittenSuspension; done?: string }, st: Style, width: number): string[] {
  if (p.written !== undefined) return ['', ...suspensionLines(p.written, st, width)];
  return p.done === undefined ? [] : indented(p.done, width, '', '  ');
}

/** The keys --json adds in pause mode: the interruptions waited on and the snapshot written (none once the tree has finished). */
export function pauseJson(w: WrittenSuspension | undefined, resumedFrom: string | undefined): Record<string, unknown> {
  return {
    interruptions: w?.interruptions ?? [],
    snapshot: w === undefined ? null : { file: w.file, bytes: w.bytes, signed: true, traceFile: w.traceFile },
    ...(resumedFrom !== undefined ? { resumedFrom } : {}),
  };
}
