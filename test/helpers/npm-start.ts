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
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = service.output().split('\n').find((l) => l.includes('marketplace API listening'));
    if (line) return Number((JSON.parse(line) as { port: number }).port);
    if (service.npm.exitCode !== null || service.npm.signalCode !== null) {
      throw new Error(`npm start exited (${service.npm.exitCode ?? service.npm.signalCode}) before listening:\n${service.output()}`);
    }
    if (Date.now() > deadline) throw new Error(`npm start did not listen within ${timeoutMs} ms:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** True while any process of the group is alive. */
export const groupAlive = (pgid: number): boolean => alive(-pgid);

/** For afterAll: whatever a failed test left running goes, postgres included. */
export function killGroup(service: Service | undefined): void {
  if (service?.npm.pid !== undefined && groupAlive(service.npm.pid)) process.kill(-service.npm.pid, 'SIGKILL');
}

/**
 * The first match of `pattern` in the service's output, waiting up to `ms` for it: a line printed
 * after another can reach the pipe in a later chunk on a loaded machine. Undefined if it never comes.
 */
export async function waitForOutput(service: Service, pattern: RegExp, ms = 15_000): Promise<RegExpExecArray | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = pattern.exec(service.output());
    if (found || Date.now() >= deadline) return found ?? undefined;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
