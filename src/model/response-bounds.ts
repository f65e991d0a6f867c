/**
 * The one bound on how much a provider may send for one call, whatever the provider: the HTTP
 * adapters count the body's bytes as they read it, `aiSdkModel` counts the answer the SDK hands
 * over. The same defaults and the same option names everywhere, so a limit means one thing.
 */
import { z } from 'zod';

const MiB = 1024 * 1024;

export const RESPONSE_BOUNDS = Object.freeze({
  // A whole JSON answer: far above the longest completion a model writes (about 1 MiB for 128k
  // tokens of output), far below what would hurt a process.
  maxResponseBytes: 8 * MiB,
  // A stream repeats JSON framing around every few tokens, several times the size of its text.
  maxStreamBytes: 64 * MiB,
});

/** The options that raise them, as every provider reads them. */
export const responseBoundOptions = {
  maxResponseBytes: z.int('must be a whole number of bytes').positive('must be greater than 0').optional(),
  maxStreamBytes: z.int('must be a whole number of bytes').positive('must be greater than 0').optional(),
};
