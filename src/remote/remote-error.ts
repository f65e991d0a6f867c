import { SymfonicError } from '../core/errors.js';

/**
 * A remote child failed: it answered with a failed task, refused the call (401, 403, 413), or
 * could not be reached. The message is the remote's own, prefixed with the child's name.
 */
export class RemoteAgentError extends SymfonicError {
  constructor(
    readonly childName: string,
    readonly remoteMessage: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(`remote agent "${childName}": ${remoteMessage}`, options);
    this.status = options?.status;
  }
  /** The HTTP status, when the remote refused the call at the door. */
  readonly status: number | undefined;
}
