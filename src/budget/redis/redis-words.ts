import { SymfonicError } from '../../core/errors.js';

/**
 * Replies that mean "this server cannot serve now", not "this command is wrong". OOM: memory is
 * full under noeviction (or a volatile-* policy with nothing left to evict), and writes wait for room.
 */
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|READONLY|NOREPLICAS|OOM)\b/;

/**
 * Redis could not be reached or could not answer in time, said in our words: where, and what
 * happened ("connection refused at redis://127.0.0.1:24379", "timed out after 1000 ms at …"),
 * not the client library's internals. The library's error is the cause.
 */
export class RedisOutage extends Error {
  override readonly name = 'RedisOutage';
}

/** Whether an error means Redis could not be reached or could not answer, rather than a bug. */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return true;
  if (error instanceof RedisOutage) return true;
  if (error.name === 'ReplyError') return TRANSIENT_REPLY.test(error.message);
  return !(error instanceof TypeError || error instanceof RangeError || error instanceof SymfonicError);
}

export const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** What a socket-level error code means, at an address. */
function socketWords(code: string | undefined, address: string): string | undefined {
  switch (code) {
    case 'ECONNREFUSED':
      return `connection refused at ${address}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host not found: ${address}`;
    case 'ECONNRESET':
    case 'EPIPE':
      return `connection reset at ${address}`;
    case 'ETIMEDOUT':
      return `connect timed out at ${address}`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `no route to ${address}`;
    default:
      return undefined;
  }
}

const codeOf = (e: unknown): string | undefined => {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

/**
 * An outage error in our words. `lastSocketError` is the last error the client's connection
 * reported: a command refused because the client is not connected ("Stream isn't writeable…")
 * says why it is not connected through it.
 */
export function outage(error: unknown, address: string, timeoutMs: number, lastSocketError: unknown): RedisOutage {
  if (error instanceof RedisOutage) return error;
  const message = describe(error);
  let words: string;
  if (/Command timed out|did not answer/i.test(message)) words = `timed out after ${timeoutMs} ms at ${address}`;
  else if ((error as Error | null)?.name === 'ReplyError') words = `${address} answered "${message}"`;
  else {
    const direct = socketWords(codeOf(error), address);
    const notConnected = /Stream isn't writeable|Connection is closed|max retries per request|connection is closed/i.test(message);
    words = direct ?? (notConnected ? (socketWords(codeOf(lastSocketError), address) ?? `not connected to ${address}`) : `${message} (at ${address})`);
  }
  return new RedisOutage(words, { cause: error });
}
