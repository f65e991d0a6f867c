/**
 * A response body read as a stream and counted, up to a limit. Past the limit reading stops and
 * the connection is dropped, so a server that sends hundreds of megabytes costs the limit in
 * memory, not the body, and fails the call with a message instead of crashing the process.
 */
import { untilAborted } from './attempt.js';
import type { HttpTarget } from './http-target.js';

/** `complete` false: the body went past the limit; `text` is its start (the limit's worth). */
export interface BoundedBody {
  text: string;
  complete: boolean;
}

export async function readBody(response: Response, limit: number, signal: AbortSignal): Promise<BoundedBody> {
  const reader = response.body?.getReader();
  if (reader === undefined) return { text: '', complete: true };
  const decoder = new TextDecoder('utf-8');
  const parts: string[] = [];
  let received = 0;
  let complete = false;
  try {
    for (;;) {
      const next = await untilAborted(reader.read(), signal);
      if (next.done) {
        complete = true;
        break;
      }
      const room = limit - received;
      received += next.value.byteLength;
      parts.push(decoder.decode(room < next.value.byteLength ? next.value.subarray(0, room) : next.value, { stream: true }));
      if (received > limit) break;
    }
    parts.push(decoder.decode());
    return { text: parts.join(''), complete };
  } finally {
    // Stops the server's sending: cancelling the body closes the connection.
    if (!complete) reader.cancel().catch(() => undefined);
  }
}

/** "8 MiB" for whole mebibytes, else the byte count. */
export function byteSize(bytes: number): string {
  const MiB = 1024 * 1024;
  return bytes % MiB === 0 ? `${bytes / MiB} MiB` : bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
}

/** The message for a body past its limit, naming the option that raises it. */
export function tooLargeMessage(target: HttpTarget, what: string, limit: number, option: string): string {
  return pastLimitMessage(`${target.provider} at ${target.displayURL}`, what, limit, option, target.auth.factory);
}

/** The same, for any provider: `who` sent `what` past `limit`, which `option` of `factory()` raises. */
export function pastLimitMessage(who: string, what: string, limit: number, option: string, factory: string): string {
  return (
    `${who} sent ${what} larger than ${byteSize(limit)} (${option}), so symfonic stopped ` +
    `reading it and failed the call. If this model's answers are really that large, raise ${option} in ${factory}().`
  );
}
