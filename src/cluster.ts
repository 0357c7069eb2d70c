import cluster, { type Worker } from 'node:cluster';
import { Counter, Gauge, Registry } from 'prom-client';
import { serveInstanceMetrics } from './http/cluster-metrics.js';
import { MemoryRateLimitStore } from './ratelimit/memory-store.js';
import { serveRateLimitStore } from './ratelimit/cluster-store.js';
import type { Logger } from './config/logger.js';

// The primary process of an instance with several workers (WEB_CONCURRENCY above 1). src/server.ts
// has already done, once, what must be done once: bound the port to report a busy one, started
// the embedded PostgreSQL (or checked DATABASE_URL), migrated, seeded the demo data. Here the
// primary forks the workers, which all listen on the one port (node:cluster hands each new
// connection to the next worker in turn), and then:
//   - holds the rate-limit counters every worker counts in when there is no Redis
//     (src/ratelimit/cluster-store.ts), so a limit is one limit for the whole instance;
//   - answers /metrics scrapes with every worker's metrics merged (src/http/cluster-metrics.ts);
//   - replaces a worker that dies, after a pause that doubles while replacements die young;
//   - on SIGTERM or SIGINT tells every worker to drain (each stops accepting, answers what it
//     has accepted, and exits) and exits once all have, after the `stopped` hook.

/** Set in a worker's environment by the primary: its place (1…N, kept by its replacements). */
const WORKER_INDEX = 'MARKETPLACE_WORKER_INDEX';
/** The database URL the primary resolved (the embedded server's is known only to it). Never logged. */
const WORKER_DATABASE_URL = 'MARKETPLACE_WORKER_DATABASE_URL';
/** The session connection the primary resolved (DATABASE_DIRECT_URL, or the same as the above). Never logged. */
const WORKER_DIRECT_URL = 'MARKETPLACE_WORKER_DIRECT_URL';

/** Replacement pauses: 0.25 s, doubling for each replacement that died within MIN_HEALTHY_MS, at most 30 s. */
const FIRST_RESTART_DELAY_MS = 250;
const MAX_RESTART_DELAY_MS = 30_000;
const MIN_HEALTHY_MS = 30_000;
/** Longest the primary waits for the workers to drain before killing them: their own grace, and then some. */
const STOP_DEADLINE_MS = 30_000;

export interface WorkerSettings {
  /** 1…N; worker 1 runs the webhook worker. */
  index: number;
  databaseUrl: string;
  directUrl: string;
}

/** In a worker: what the primary told it. */
export function workerSettings(env: NodeJS.ProcessEnv = process.env): WorkerSettings {
  const index = Number(env[WORKER_INDEX]);
  const databaseUrl = env[WORKER_DATABASE_URL];
  const directUrl = env[WORKER_DIRECT_URL];
  if (!Number.isInteger(index) || index < 1 || !databaseUrl || !directUrl) throw new Error('a cluster worker was started without its settings');
  return { index, databaseUrl, directUrl };
}

/** A worker tells the primary it listens with this message. */
export const LISTENING = { mp: 'marketplace:listening' } as const;

export interface PrimaryOptions {
  workers: number;
  logger: Logger;
  databaseUrl: string;
  directUrl: string;
  /** The port the workers listen on (already resolved when PORT was 0). */
  port: number;
  /** False with REDIS_URL: the workers count in Redis, the primary holds nothing. */
  shareRateLimits: boolean;
  /** Once every worker listens, at start. */
  onListening(): Promise<void>;
  /** After every worker has exited, before the primary does: close the database. */
  onStopped(): Promise<void>;
}

interface Slot {
  index: number;
  worker?: Worker;
  listening: boolean;
  startedAt: number;
  /** Replacements in a row that died within MIN_HEALTHY_MS. */
  failures: number;
  restart?: NodeJS.Timeout;
}

/** Runs the primary until it is stopped; resolves once every worker listens. */
export function runPrimary(opts: PrimaryOptions): Promise<void> {
  const { logger } = opts;
  const slots: Slot[] = Array.from({ length: opts.workers }, (_, i) => ({ index: i + 1, listening: false, startedAt: 0, failures: 0 }));
  let started = false;
  let stopping = false;
  let exitCode = 0;
  /** Why the instance could not start: reported once the workers that did start have stopped. */
  let startFailure: Error | undefined;

  const registry = new Registry();
  const liveWorkers = new Gauge({ name: 'cluster_workers', help: 'Worker processes of this instance listening', registers: [registry], aggregator: 'first' });
  const restarts = new Counter({ name: 'cluster_worker_restarts_total', help: 'Worker processes of this instance that died and were replaced', registers: [registry] });
  const countListening = () => liveWorkers.set(slots.filter((s) => s.listening).length);

  const rateLimits = opts.shareRateLimits ? new MemoryRateLimitStore() : undefined;
  const stopServingRateLimits = rateLimits && serveRateLimitStore(rateLimits, cluster);
  serveInstanceMetrics(registry, { on: (event, listener) => cluster.on(event, listener), listening: () => slots.filter((s) => s.listening && s.worker).map((s) => s.worker!) });

  let resolveStarted!: () => void;
  let rejectStarted!: (error: Error) => void;
  const startedPromise = new Promise<void>((resolve, reject) => {
    resolveStarted = resolve;
    rejectStarted = reject;
  });

  // Workers run this same program; exec and execArgv (the V8 flags `npm start` gives) are the primary's.
  const fork = (slot: Slot) => {
    slot.restart = undefined;
    slot.listening = false;
    slot.startedAt = Date.now();
    const worker = cluster.fork({ [WORKER_INDEX]: String(slot.index), [WORKER_DATABASE_URL]: opts.databaseUrl, [WORKER_DIRECT_URL]: opts.directUrl, PORT: String(opts.port) });
    slot.worker = worker;
    worker.on('message', (message: unknown) => {
      if ((message as { mp?: unknown } | null)?.mp !== LISTENING.mp || slot.worker !== worker) return;
      slot.listening = true;
      countListening();
      if (started) logger.info({ worker: slot.index, pid: worker.process.pid }, 'worker replaced');
      else if (slots.every((s) => s.listening)) {
        started = true;
        resolveStarted();
      }
    });
    worker.on('exit', (code, signal) => exited(slot, worker, code, signal));
  };

  const exited = (slot: Slot, worker: Worker, code: number | null, signal: string | null) => {
    if (slot.worker !== worker) return;
    slot.worker = undefined;
    slot.listening = false;
    countListening();
    if (stopping) {
      if (code !== 0) logger.warn({ worker: slot.index, pid: worker.process.pid, code, signal }, 'worker did not stop cleanly');
      if (slots.every((s) => !s.worker)) void finish();
      return;
    }
    if (!started) {
      // A worker that cannot start (its own message is already on stderr) stops the instance.
      startFailure = new Error(`worker ${slot.index} exited (${signal ?? `code ${code}`}) before listening`);
      void stop('start-up failure');
      return;
    }
    const ranMs = Date.now() - slot.startedAt;
    slot.failures = ranMs >= MIN_HEALTHY_MS ? 0 : slot.failures + 1;
    const delayMs = Math.min(MAX_RESTART_DELAY_MS, FIRST_RESTART_DELAY_MS * 2 ** Math.max(0, slot.failures - 1));
    logger.error({ worker: slot.index, pid: worker.process.pid, code, signal, ranMs, restartInMs: delayMs }, 'worker died: starting another');
    restarts.inc();
    slot.restart = setTimeout(() => fork(slot), delayMs);
  };

  const stop = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    if (!startFailure) logger.info({ signal: reason }, 'shutting down');
    for (const slot of slots) {
      clearTimeout(slot.restart);
      slot.restart = undefined;
      // Each worker drains on SIGTERM (src/server.ts); a second signal (a Ctrl-C that reached the
      // whole process group already) changes nothing.
      slot.worker?.process.kill('SIGTERM');
    }
    if (slots.every((s) => !s.worker)) return finish();
    setTimeout(() => {
      for (const slot of slots) {
        if (!slot.worker) continue;
        logger.error({ worker: slot.index, pid: slot.worker.process.pid }, `worker still running ${STOP_DEADLINE_MS / 1000} s after SIGTERM: killing it`);
        slot.worker.process.kill('SIGKILL');
        exitCode = 1;
      }
    }, STOP_DEADLINE_MS).unref();
  };

  let finishing = false;
  const finish = async () => {
    if (finishing) return;
    finishing = true;
    stopServingRateLimits?.();
    await rateLimits?.close();
    try {
      await opts.onStopped();
    } catch (error) {
      logger.error({ err: error }, 'stopping failed');
      exitCode = 1;
    }
    // src/server.ts reports a failed start (and exits 1) as it does any other.
    if (startFailure) return rejectStarted(startFailure);
    if (exitCode === 0) logger.info('stopped');
    process.exit(exitCode);
  };

  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  for (const slot of slots) fork(slot);
  return startedPromise.then(() => opts.onListening());
}
