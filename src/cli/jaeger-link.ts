import { indented } from './demo-pause-report.js';
import { symfonicCommand } from './invocation.js';
import type { Style } from './style.js';

/** A Jaeger UI's index page names itself in its title; a query service built without the UI serves a placeholder. */
const UI_TITLE = /<title>\s*Jaeger UI\s*<\/title>/i;
const PROBE_MS = 1500;

/**
 * Whether a Jaeger UI answers at `url`. A link is printed only then: Jaeger built from source
 * (the `npm run stack` one) serves "This is not the Jaeger UI you are looking for!" at the same
 * address, and a link to nothing is worse than none.
 */
export async function jaegerUiAnswers(url: string, timeoutMs = PROBE_MS): Promise<boolean> {
  try {
    const res = await fetch(`${url}/`, { signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
    if (!res.ok) return false;
    return UI_TITLE.test((await res.text()).slice(0, 65_536));
  } catch {
    return false;
  }
}

/** What the demo prints about a trace it exported: the UI's link when a UI answers, else the command that draws it. */
export async function traceLinkLines(jaegerUrl: string, traceId: string, st: Style, width: number): Promise<string[]> {
  if (await jaegerUiAnswers(jaegerUrl)) return [`${st.dim('jaeger')} ${jaegerUrl}/trace/${traceId}`];
  const tree = `${symfonicCommand()} tree --jaeger ${jaegerUrl} ${traceId}`;
  return [
    ...indented(`no Jaeger UI answers at ${jaegerUrl}; draw the trace from Jaeger's query API with`, width, '', '  '),
    `  ${tree}`,
    ...indented('(add --html tree.html for a page to open in a browser)', width, '  ', '  '),
  ];
}
