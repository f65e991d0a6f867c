/**
 * Text from outside the CLI (trace files, Jaeger answers, Redis keys and values, run events) made
 * harmless to print on a terminal. The one rule every command applies to data, where it turns data
 * into cells and lines, before adding its own styling (style.ts) and cursor movement (live-tree.ts).
 *
 * Why: a terminal obeys control characters whoever wrote them. ESC opens sequences that clear the
 * screen (CSI 2J), write the clipboard (OSC 52), draw a link that reads one address and opens
 * another (OSC 8) or hide text (SGR 8); the C1 controls U+0080–U+009F are the same introducers in
 * one character; CR, BS and the rest overwrite what is shown; bidi overrides and isolates reorder
 * the rest of a line so it reads other than it is. An agent name, an outcome or a tenant id in a
 * trace or in Redis is anyone's text.
 *
 * Rule: every C0 control (newline too: a row is one line), DEL, every C1 control, the bidi
 * embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), the bidi marks (U+200E,
 * U+200F, U+061C) and the line and paragraph separators (U+2028, U+2029) are written as their
 * `\uXXXX` escape: visible, inert, one column a character so widths still add up, and JSON's own
 * spelling, so the same rule makes `--json` text safe without changing its values (JSON.stringify
 * escapes C0 but leaves DEL, C1 and bidi characters raw). Backslashes are kept: a value that reads
 * like an escape misleads no terminal, and `--json` gives every value exactly.
 */
const UNSAFE = /[\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

const escape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** One cell or line of data, every unsafe character escaped. */
export function terminalText(s: string): string {
  return s.replace(UNSAFE, escape);
}

/** Text of several lines (a JSON document, an error message): the rule on each line, the line breaks kept. */
export function terminalLines(text: string): string {
  return text.split('\n').map(terminalText).join('\n');
}
