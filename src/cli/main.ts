#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { didYouMean, InputError, UsageError } from './args.js';
import { BUDGET_HELP, DEMO_HELP, PROGRAM_HELP, TREE_HELP } from './help.js';
import { terminalLines } from './terminal-text.js';

const COMMANDS: Record<string, { help: string; run: (args: string[]) => Promise<number> }> = {
  demo: { help: DEMO_HELP, run: async (args) => (await import('./demo.js')).demoCommand(args) },
  tree: { help: TREE_HELP, run: async (args) => (await import('./tree.js')).treeCommand(args) },
  budget: { help: BUDGET_HELP, run: async (args) => (await import('./budget.js')).budgetCommand(args) },
};

function version(): string {
  // dist/cli/main.js and src/cli/main.ts both sit two levels below package.json.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** 'unknown command "dmeo"; did you mean demo? Commands: demo, tree, budget'. */
function noSuchCommand(what: string, word: string): string {
  const names = Object.keys(COMMANDS);
  const hint = didYouMean(word, names);
  return `${what} "${word}"${hint}${hint ? ' Commands' : '; commands'}: ${names.join(', ')}`;
}

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    process.stderr.write(`symfonic: missing command\n\n${PROGRAM_HELP}`);
    return 2;
  }
  if (first === '-h' || first === '--help') {
    process.stdout.write(PROGRAM_HELP);
    return 0;
  }
  if (first === '--version' || first === '-v') {
    process.stdout.write(`symfonic ${version()}\n`);
    return 0;
  }
  if (first === 'help') {
    const topic = rest[0];
    if (topic === undefined) {
      process.stdout.write(PROGRAM_HELP);
      return 0;
    }
    const command = Object.hasOwn(COMMANDS, topic) ? COMMANDS[topic] : undefined;
    if (!command) throw new UsageError(noSuchCommand('no command', topic));
    process.stdout.write(command.help);
    return 0;
  }
  if (first.startsWith('-')) {
    const hint = didYouMean(first, ['--help', '--version']);
    throw new UsageError(`unknown option ${first}${hint || '; options go after the command (symfonic demo --json)'}`);
  }
  const command = Object.hasOwn(COMMANDS, first) ? COMMANDS[first] : undefined;
  if (!command) throw new UsageError(noSuchCommand('unknown command', first));
  return command.run(rest);
}

// A reader that stops early (symfonic demo | head) closes the pipe; that is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      const help = error.command ? `symfonic ${error.command} --help` : 'symfonic --help';
      const hint = error instanceof InputError ? '' : `Run '${help}' for usage.\n`;
      process.stderr.write(`symfonic${error.command ? ` ${error.command}` : ''}: ${terminalLines(error.message)}\n${hint}`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`symfonic: ${terminalLines(error instanceof Error ? (error.stack ?? error.message) : String(error))}\n`);
    process.exitCode = 1;
  },
);
