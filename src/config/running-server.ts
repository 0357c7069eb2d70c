import fs from 'node:fs/promises';
import path from 'node:path';

// Where the server of a DATA_DIR listens, for the command line run beside it: `keys invite` prints
// links to the address the server really has (PORT=0, a PORT set for the server only), not to
// PORT's default. `$DATA_DIR/server.json` is written once the server listens and removed when it
// stops; one left by a server that was killed names a dead pid and is ignored.

const FILE_NAME = 'server.json';

interface RunningServer {
  pid: number;
  /** The base URL a client on this machine uses (the one the "listening" line gives). */
  url: string;
}

/**
 * Records this process's address. Best effort: a DATA_DIR that cannot be written (a read-only
 * container with DATABASE_URL) costs the command line its guess, not the service its start.
 * Returns what removes the record again, if it is still this process's.
 */
export async function recordServerAddress(dataDir: string, url: string, onError: (error: unknown) => void): Promise<() => Promise<void>> {
  const file = path.join(dataDir, FILE_NAME);
  const record: RunningServer = { pid: process.pid, url };
  try {
    await fs.mkdir(dataDir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    await fs.writeFile(tmp, `${JSON.stringify(record)}\n`);
    await fs.rename(tmp, file);
  } catch (error) {
    onError(error);
    return async () => undefined;
  }
  return async () => {
    // Another server started on the same DATA_DIR since may have replaced it: that one stays.
    if ((await readRecord(file))?.pid === process.pid) await fs.rm(file, { force: true });
  };
}

/** The base URL of the server running on this DATA_DIR; undefined when none runs. */
export async function runningServerUrl(dataDir: string): Promise<string | undefined> {
  const record = await readRecord(path.join(dataDir, FILE_NAME));
  return record && pidAlive(record.pid) ? record.url : undefined;
}

async function readRecord(file: string): Promise<RunningServer | undefined> {
  try {
    const parsed: unknown = JSON.parse(await fs.readFile(file, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { pid, url } = parsed as Partial<RunningServer>;
    return Number.isInteger(pid) && pid! > 0 && typeof url === 'string' && URL.canParse(url) ? { pid: pid!, url } : undefined;
  } catch {
    return undefined;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
