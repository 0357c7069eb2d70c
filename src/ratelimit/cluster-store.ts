import type { Worker } from 'node:cluster';
import { MemoryRateLimitStore } from './memory-store.js';
import type { BudgetDecision, RateLimitDecision, RateLimitStore } from './store.js';

// Rate limits exact across the worker processes of one instance without Redis (WEB_CONCURRENCY
// above 1, src/cluster.ts): the primary process holds the one MemoryRateLimitStore and every
// worker's store forwards each operation (hits, field calls, cost budgets) to it over the cluster's IPC channel.
//
// The primary runs each operation synchronously (the memory store's *Sync methods), one message
// after another, so N concurrent hits from any mix of workers against a bucket with R left allow
// exactly R, as in one process. A worker sends the operations asked for during one turn of its
// event loop as one message (and the primary answers with one), so a busy worker pays one IPC
// round trip per turn rather than per request.

/** Tags this protocol's messages among the others on the channel (prom-client's, the cluster's own). */
const TAG = 'marketplace:ratelimit';

type Operation = ['hit' | 'peek', string, number, number] | ['logCall' | 'take', string, number, number, number];
type Answer = RateLimitDecision | BudgetDecision | number[];
type Outcome = { ok: Answer } | { error: string };

interface Request {
  mp: typeof TAG;
  batch: number;
  ops: Operation[];
}

interface Reply {
  mp: typeof TAG;
  batch: number;
  outcomes: Outcome[];
}

/** What the worker's store needs of its end of the channel: `process` in a cluster worker. */
export interface ChannelToPrimary {
  readonly connected: boolean;
  send?(message: unknown, sendHandle?: undefined, options?: undefined, callback?: (error: Error | null) => void): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  on(event: 'disconnect', listener: () => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'disconnect', listener: () => void): unknown;
}

interface Pending {
  op: Operation;
  resolve(value: Answer): void;
  reject(error: Error): void;
}

/**
 * A worker's store: every hit, peek and field-call log is decided by the primary's memory store.
 * While the channel to the primary is closed (the primary is gone, and this worker about to
 * follow it) operations are decided in this process's memory instead, as the Redis store does
 * during an outage, and counted in `fallbackHits`.
 */
export class ClusterRateLimitStore implements RateLimitStore {
  readonly kind = 'memory' as const;
  readonly redisErrors = 0;
  fallbackHits = 0;

  private readonly fallback = new MemoryRateLimitStore();
  private queued: Pending[] = [];
  private flushing: NodeJS.Immediate | undefined;
  private readonly inFlight = new Map<number, Pending[]>();
  private nextBatch = 0;
  private closed = false;

  constructor(private readonly channel: ChannelToPrimary = process as ChannelToPrimary) {
    channel.on('message', this.onMessage);
    channel.on('disconnect', this.onDisconnect);
  }

  get usingFallback(): boolean {
    return this.closed || !this.channel.connected;
  }

  hit(bucket: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    return this.ask(['hit', bucket, limit, windowMs]) as Promise<RateLimitDecision>;
  }

  peek(bucket: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    return this.ask(['peek', bucket, limit, windowMs]) as Promise<RateLimitDecision>;
  }

  logCall(key: string, now: number, max: number, windowMs: number): Promise<number[]> {
    return this.ask(['logCall', key, now, max, windowMs]) as Promise<number[]>;
  }

  take(bucket: string, amount: number, capacity: number, restorePerSecond: number): Promise<BudgetDecision> {
    return this.ask(['take', bucket, amount, capacity, restorePerSecond]) as Promise<BudgetDecision>;
  }

  waitUntilReady(): Promise<boolean> {
    return Promise.resolve(true);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.channel.off('message', this.onMessage);
    this.channel.off('disconnect', this.onDisconnect);
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    // Nothing is left waiting for an answer that will not come.
    this.decideLocally(this.queued);
    this.queued = [];
    for (const pending of this.inFlight.values()) this.decideLocally(pending);
    this.inFlight.clear();
    await this.fallback.close();
  }

  private ask(op: Operation): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const pending = { op, resolve, reject };
      if (this.usingFallback || !this.channel.send) {
        this.decideLocally([pending]);
        return;
      }
      this.queued.push(pending);
      this.flushing ??= setImmediate(this.flush);
    });
  }

  private readonly flush = () => {
    this.flushing = undefined;
    const batch = this.queued;
    this.queued = [];
    if (batch.length === 0) return;
    if (this.usingFallback) {
      this.decideLocally(batch);
      return;
    }
    const id = this.nextBatch++;
    this.inFlight.set(id, batch);
    const request: Request = { mp: TAG, batch: id, ops: batch.map((p) => p.op) };
    this.channel.send!(request, undefined, undefined, (error) => {
      // Not sent (the channel closed meanwhile): no answer will come.
      if (error && this.inFlight.delete(id)) this.decideLocally(batch);
    });
  };

  private readonly onMessage = (message: unknown) => {
    if (!isTagged(message) || !('outcomes' in message)) return;
    const reply = message as Reply;
    const batch = this.inFlight.get(reply.batch);
    if (!batch) return;
    this.inFlight.delete(reply.batch);
    batch.forEach((pending, i) => {
      const outcome = reply.outcomes[i];
      if (outcome && 'ok' in outcome) pending.resolve(outcome.ok);
      else pending.reject(new RangeError(outcome?.error ?? 'no answer from the primary process'));
    });
  };

  private readonly onDisconnect = () => {
    for (const pending of this.inFlight.values()) this.decideLocally(pending);
    this.inFlight.clear();
  };

  private decideLocally(batch: Pending[]): void {
    for (const pending of batch) {
      this.fallbackHits++;
      const outcome = run(this.fallback, pending.op);
      if ('ok' in outcome) pending.resolve(outcome.ok);
      else pending.reject(new RangeError(outcome.error));
    }
  }
}

function run(store: MemoryRateLimitStore, op: Operation): Outcome {
  try {
    switch (op[0]) {
      case 'hit':
        return { ok: store.hitSync(op[1], op[2], op[3]) };
      case 'peek':
        return { ok: store.peekSync(op[1], op[2], op[3]) };
      case 'logCall':
        return { ok: store.logCallSync(op[1], op[2], op[3], op[4]) };
      case 'take':
        return { ok: store.takeSync(op[1], op[2], op[3], op[4]) };
    }
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

const isTagged = (message: unknown): message is { mp: string } =>
  typeof message === 'object' && message !== null && (message as { mp?: unknown }).mp === TAG;

/** What the primary needs of the cluster: `node:cluster` itself. */
export interface WorkerMessages {
  on(event: 'message', listener: (worker: Worker, message: unknown) => void): unknown;
  off(event: 'message', listener: (worker: Worker, message: unknown) => void): unknown;
}

/**
 * The primary's side: answers every worker's operations from `store`, in the order they arrive.
 * Returns a function that stops answering.
 */
export function serveRateLimitStore(store: MemoryRateLimitStore, workers: WorkerMessages): () => void {
  const listener = (worker: Worker, message: unknown) => {
    if (!isTagged(message) || !('ops' in message)) return;
    const request = message as Request;
    const reply: Reply = { mp: TAG, batch: request.batch, outcomes: request.ops.map((op) => run(store, op)) };
    if (worker.isConnected()) worker.send(reply, undefined, undefined, () => undefined);
  };
  workers.on('message', listener);
  return () => workers.off('message', listener);
}
