import { createHash } from 'node:crypto';

/**
 * What an approval is bound to: SHA-256 (hex) of the tool's name and the call's arguments exactly
 * as the model gave them (the text the snapshot keeps, from which the input the approver was
 * shown is read and the call would run with). A decision that carries it is refused when the
 * snapshot's call is no longer that call.
 */
export function inputDigest(tool: string, args: string): string {
  return createHash('sha256').update(JSON.stringify([tool, args])).digest('hex');
}
