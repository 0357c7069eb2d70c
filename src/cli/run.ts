import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A mistake in the command line: reported with the usage text. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** True when the module at `moduleUrl` is the script node was asked to run (not an import). */
export const isEntryPoint = (moduleUrl: string) =>
  process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(moduleUrl));

/**
 * Runs a command and turns its failure into an exit code 1 and a message on stderr: the usage
 * text for a UsageError, just the message for `expected` errors (bad input, configuration), and
 * the stack for anything unexpected.
 */
export function runCli(run: () => Promise<unknown>, opts: { usage: string; expected: (new (...args: never[]) => Error)[]; failure: string }) {
  run().catch((error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`Error: ${error.message}\n\n${opts.usage}\n`);
    } else if (opts.expected.some((type) => error instanceof type)) {
      process.stderr.write(`Error: ${(error as Error).message}\n`);
    } else {
      process.stderr.write(`${opts.failure}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
    process.exitCode = 1;
  });
}
