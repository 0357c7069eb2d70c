import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { entryArgs } from './entry.js';

// `npm run keys -- …` as a real process: what an operator types, what a script parses.

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the keys CLI with `args` and `env` added to this process's environment. */
export function runKeysCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...entryArgs('cli/keys-command.ts'), ...args],
      // LOG_LEVEL=info: the CLI's own progress lines are on, and must still stay off stdout.
      { cwd: root, env: { ...process.env, LOG_LEVEL: 'info', ...env }, timeout: 120_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}
