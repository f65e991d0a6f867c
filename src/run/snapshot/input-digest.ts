import * as crypto from 'node:crypto';

/**
 * SHA-256 (hex) of a text. Node's one-shot `crypto.hash` (20.12 and later) makes the same digest
 * as a Hash object at about a third of its cost: a digest is made for each approval as a tree
 * suspends and again as it resumes (docs/benchmarks.md, "resume"). Older Node 20 lines have only
 * the Hash object. Read from the namespace: a named import of an export the running Node lacks
 * would fail to load.
 */
const sha256Hex: (text: string) => string =
  typeof (crypto as Partial<typeof crypto>).hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text).digest('hex');

/**
 * What an approval is bound to: SHA-256 (hex) of the tool's name and the call's arguments exactly
 * as the model gave them (the text the snapshot keeps, from which the input the approver was
 * shown is read and the call would run with). A decision that carries it is refused when the
 * snapshot's call is no longer that call.
 */
export function inputDigest(tool: string, args: string): string {
  return sha256Hex(JSON.stringify([tool, args]));
}
