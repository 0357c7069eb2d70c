import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

// What the bench scripts (run.ts, deep-pages.ts) share: where they run, and how they start and
// listen to the programs they measure.

export const ROOT = path.resolve(import.meta.dirname, '..');
/** Every measured program listens here only. */
export const HOST = '127.0.0.1';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, HOST, () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Resolves with the first match of `pattern` in the child's stderr from now on. */
export function nextLine(child: ChildProcess, pattern: RegExp, timeoutMs = 10_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.stderr?.off('data', onData);
      reject(new Error(`no ${pattern} from the child within ${timeoutMs} ms`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      const match = pattern.exec(d.toString());
      if (!match) return;
      clearTimeout(timer);
      child.stderr?.off('data', onData);
      resolve(match);
    };
    child.stderr?.on('data', onData);
  });
}

/**
 * The V8 flags `npm start` gives the service (package.json's start script): the service is
 * measured as it runs. The baselines and the peer get them too, so that every program runs on
 * the same Node settings.
 */
export function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const match = /\bnode((?:\s+--\S+)*)\s+dist\/server\.js\b/.exec(pkg.scripts.start ?? '');
  if (!match) throw new Error(`package.json's start script is not "node [--flags] dist/server.js": ${pkg.scripts.start}`);
  return match[1]!.split(/\s+/).filter(Boolean);
}
