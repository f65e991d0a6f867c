import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `text` to `file` without following what is there: the text goes to a fresh file beside
 * it (created with O_EXCL, readable by this user only: a snapshot can hold a conversation's
 * secrets), which is then renamed over `file`. A symlink someone planted at `file` is replaced,
 * never written through, so the file it points to stays as it was.
 */
export function replaceFile(file: string, text: string): void {
  const temp = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  writeFileSync(temp, text, { flag: 'wx', mode: 0o600 });
  try {
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    // The error names the file asked for, not the temporary one.
    throw Object.assign(error as NodeJS.ErrnoException, { path: file });
  }
}
