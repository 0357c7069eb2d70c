import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/config.js';
import { openDatabase } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { AppError } from '../shared/errors.js';

/** A mistake in the command line: reported in one line that points at --help. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A service's refusal for the terminal: its message, then what is wrong with each field, a line each. */
export function describeError(error: AppError): string {
  const fields = Object.entries(error.details ?? {}).map(([name, problem]) => `\n  ${name}: ${typeof problem === 'string' ? problem : JSON.stringify(problem)}`);
  return `${error.message}${fields.join('')}`;
}

/** True when the module at `moduleUrl` is the script node was asked to run (not an import). */
export const isEntryPoint = (moduleUrl: string) =>
  process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(moduleUrl));

/**
 * Runs a command and turns its failure into an exit code 1 and a message on stderr: for a
 * UsageError its one line and where the usage is (`help`: the command that prints it; the whole
 * usage after every mistake buried the mistake), the message and each field's problem for a
 * service's refusal (AppError), just the message for `expected` errors (configuration), and the
 * stack for anything unexpected.
 */
export function runCli(run: () => Promise<unknown>, opts: { help: string; expected: (new (...args: never[]) => Error)[]; failure: string }) {
  run().catch((error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`Error: ${error.message} (see \`${opts.help}\`)\n`);
    } else if (error instanceof AppError) {
      process.stderr.write(`Error: ${describeError(error)}\n`);
    } else if (opts.expected.some((type) => error instanceof type)) {
      process.stderr.write(`Error: ${(error as Error).message}\n`);
    } else {
      process.stderr.write(`${opts.failure}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
    process.exitCode = 1;
  });
}

export interface CliDatabaseOptions {
  /** Progress lines (opening, migrating). */
  log: (msg: string) => void;
  /** Said on Ctrl-C / SIGTERM, whatever the log level. */
  interrupted: { say: (msg: string) => void; message: string; before?: () => void };
}

/**
 * Runs `work` on the database the server would use (same environment), migrated first (through
 * the direct connection: the migrations hold a session's advisory lock). Ctrl-C
 * or SIGTERM meanwhile stops an embedded server this process started rather than orphaning it.
 */
export async function withMigratedDatabase<T>(config: Config, opts: CliDatabaseOptions, work: (db: { url: string; directUrl: string }) => Promise<T>): Promise<T> {
  const db = await openDatabase(config, { log: opts.log });
  const interrupt = () => {
    opts.interrupted.before?.();
    opts.interrupted.say(opts.interrupted.message);
    void db.close().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    const { applied } = await migrate(db.directUrl, { log: opts.log });
    if (applied.length > 0) opts.log(`Applied ${applied.length} migration(s).`);
    return await work({ url: db.url, directUrl: db.directUrl });
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
    await db.close();
  }
}
