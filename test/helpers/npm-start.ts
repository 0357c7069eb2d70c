import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { alive } from './processes.js';

// `npm start` the way a user runs it: npm, then node on the build that `npm ci` made, in a process
// group of their own (as a terminal or a service manager gives them), so a test can signal the
// group, npm alone, or node alone.

const root = path.resolve(import.meta.dirname, '../..');

export interface Service {
  /** The npm process; its pid is also the process group's id. */
  npm: ChildProcess;
  /** stdout and stderr so far, interleaved. */
  output(): string;
  /** npm's exit: code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function npmStart(env: Record<string, string>): Service {
  const npm = spawn('npm', ['start'], {
    cwd: root,
    detached: true,
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  npm.stdout!.on('data', (d) => (output += d));
  npm.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    npm.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { npm, output: () => output, exited };
}

/** Resolves with the port from the "listening" log line; rejects if npm exits first. */
export async function listeningPort(service: Service, timeoutMs = 120_000): Promise<number> {
  // The whole line, to its newline: a chunk can end inside it.
  const line = await waitForText(service.output, /^.*marketplace API listening.*\n/m, { ms: timeoutMs, stopped: () => hasExited(service) });
  if (line) return Number((JSON.parse(line[0]) as { port: number }).port);
  if (hasExited(service)) {
    throw new Error(`npm start exited (${service.npm.exitCode ?? service.npm.signalCode}) before listening:\n${service.output()}`);
  }
  throw new Error(`npm start did not listen within ${timeoutMs} ms:\n${service.output()}`);
}

const hasExited = (service: Service) => service.npm.exitCode !== null || service.npm.signalCode !== null;

/** True while any process of the group is alive. */
export const groupAlive = (pgid: number): boolean => alive(-pgid);

/** For afterAll: whatever a failed test left running goes, postgres included. */
export function killGroup(service: Service | undefined): void {
  if (service?.npm.pid !== undefined && groupAlive(service.npm.pid)) process.kill(-service.npm.pid, 'SIGKILL');
}

/**
 * The first match of `pattern` in what `read` returns, polled until `ms` have passed or `stopped`
 * says nothing more will come: a line printed after another can reach the pipe in a later chunk on
 * a loaded machine. Undefined if it never comes.
 */
export async function waitForText(
  read: () => string,
  pattern: RegExp,
  { ms = 15_000, stopped = () => false }: { ms?: number; stopped?: () => boolean } = {},
): Promise<RegExpExecArray | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    // Read whether it has stopped before reading the text: output written just before the exit counts.
    const over = stopped() || Date.now() >= deadline;
    const found = pattern.exec(read());
    if (found || over) return found ?? undefined;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The first match of `pattern` in the service's output (see waitForText). */
export const waitForOutput = (service: Service, pattern: RegExp, ms = 15_000) =>
  waitForText(service.output, pattern, { ms, stopped: () => hasExited(service) });

/** Polls `check` until it holds; past `timeoutMs`, throws with `what` and the service's output. */
export async function waitUntil(what: string, check: () => boolean, timeoutMs: number, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms; server output:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
