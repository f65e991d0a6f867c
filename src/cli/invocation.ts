import { basename, isAbsolute, relative } from 'node:path';

/**
 * The command that runs symfonic again the way this process was started, for the commands the CLI
 * tells a reader to type next (a resume, a tree). `symfonic` alone is right only when it came
 * from PATH: in a clone (`npm run demo`) or a project that depends on the package, there is no
 * `symfonic` on PATH, and `npx symfonic` finds the package's own bin.
 *
 * - started by npm (`npm run …`, `npx symfonic …`: npm sets npm_command) → `npx symfonic`
 * - started as an executable named `symfonic` (a global install, a bin on PATH) → `symfonic`
 * - started as `node path/to/main.js` → that, the path relative to the working directory
 */
export function symfonicCommand(env: NodeJS.ProcessEnv = process.env, script: string | undefined = process.argv[1], cwd: string = process.cwd()): string {
  if (env['npm_command'] !== undefined) return 'npx symfonic';
  if (script === undefined || basename(script) === 'symfonic') return 'symfonic';
  const near = relative(cwd, script);
  return `node ${near !== '' && !near.startsWith('..') && !isAbsolute(near) ? near : script}`;
}
