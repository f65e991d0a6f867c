import { HEADER, USAGE_LINEAGE_EXTENSION } from './wire.js';
import type { RemoteFailure } from './outcome.js';
import type { UsageReport } from './usage-report.js';

/**
 * What the usage-lineage extension carries back, under its URI in a task's (or a status
 * update's) metadata: the served tree's spend, why it did not answer, and its run events while
 * it streams. Every field is checked by the reader: the other side may not be symfonic.
 */
export interface UsageLineageData {
  usage?: UsageReport;
  failure?: RemoteFailure;
  /** A paused task's interruptions with their lineage (Interruption objects), beside the status message's plain ones. */
  interruptions?: readonly unknown[];
  /** Run events of the served tree (RunEvent objects), in the served side's order. */
  events?: readonly unknown[];
}

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** The extension URIs a request asks for, from `A2A-Extensions` (and 0.3's `X-A2A-Extensions`). */
function requestedExtensions(headers: Headers): Set<string> {
  const out = new Set<string>();
  for (const name of [HEADER.extensions, HEADER.legacyExtensions]) {
    const raw = headers[name];
    for (const value of Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]) {
      for (const uri of value.split(',')) if (uri.trim() !== '') out.add(uri.trim());
    }
  }
  return out;
}

/** Whether a request activates symfonic's extension. */
export function activatesUsageLineage(headers: Headers): boolean {
  // The common case, a symfonic caller naming this one extension, without splitting anything.
  if (headers[HEADER.extensions] === USAGE_LINEAGE_EXTENSION) return true;
  if (headers[HEADER.extensions] === undefined && headers[HEADER.legacyExtensions] === undefined) return false;
  return requestedExtensions(headers).has(USAGE_LINEAGE_EXTENSION);
}

/** The metadata entry of an activated request's answer. */
export function usageLineageMetadata(data: UsageLineageData): Record<string, unknown> {
  return { [USAGE_LINEAGE_EXTENSION]: data };
}

/** The extension's entry in `metadata`, if there is one that reads as an object. */
export function readUsageLineage(metadata: unknown): Record<string, unknown> | undefined {
  const entry = (metadata as Record<string, unknown> | null | undefined)?.[USAGE_LINEAGE_EXTENSION];
  return typeof entry === 'object' && entry !== null && !Array.isArray(entry) ? (entry as Record<string, unknown>) : undefined;
}
