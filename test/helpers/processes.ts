import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

/** True while the process (or, for a negative id, any process of the group) exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A loopback port nothing listens on (bound, then released): a connection to it is refused. */
export async function unusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** True when `file` exists and may be run: a real component the tests start, present on this machine. */
export function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The direct children of a process, with their command lines (ps). */
export function childrenOf(pid: number): Array<{ pid: number; command: string }> {
  let text = '';
  try {
    text = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when there is none
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [, child, command] = /^\s*(\d+)\s+(.*)$/.exec(line)!;
      return { pid: Number(child), command: command! };
    });
}
