import type { Worker } from 'node:cluster';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';

// /metrics for an instance of several worker processes (WEB_CONCURRENCY above 1, src/cluster.ts).
// Whichever worker a scrape reaches asks the primary, which collects every listening worker's
// registry (and its own) over the cluster's IPC channel and merges them with prom-client's
// AggregatorRegistry.aggregate: counters and histograms are summed, each gauge as its
// `aggregator` says (src/http/metrics.ts). One scrape therefore covers the whole instance.

const TAG = 'marketplace:metrics';

/** A worker asks for the instance's text (`ask`), or the primary for a worker's metrics (`collect`). */
type Message =
  | { mp: typeof TAG; ask: number }
  | { mp: typeof TAG; answer: number; text?: string; error?: string }
  | { mp: typeof TAG; collect: number }
  | { mp: typeof TAG; collected: number; metrics?: Metrics; error?: string };

type Metrics = MetricObjectWithValues<MetricValue<string>>[];

const isMessage = (message: unknown): message is Message =>
  typeof message === 'object' && message !== null && (message as { mp?: unknown }).mp === TAG;

/** How long the primary waits for one worker's metrics; a worker that does not answer is left out. */
const COLLECT_TIMEOUT_MS = 2_000;
/** How long a worker waits for the primary's answer. */
const ASK_TIMEOUT_MS = 5_000;

/** The worker's end of the channel: `process` in a cluster worker. */
interface Channel {
  send?(message: unknown, sendHandle?: undefined, options?: undefined, callback?: (error: Error | null) => void): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

/**
 * In a worker: answers the primary's requests for this process's `registry`, and returns what
 * /metrics serves: the whole instance's metrics, from the primary.
 */
export function instanceMetrics(registry: Registry, channel: Channel = process as Channel): () => Promise<string> {
  const waiting = new Map<number, { resolve(text: string): void; reject(error: Error): void; timer: NodeJS.Timeout }>();
  let next = 0;
  const send = (message: Message) =>
    new Promise<void>((resolve, reject) => {
      if (!channel.send) return reject(new Error('not a cluster worker'));
      channel.send(message, undefined, undefined, (error) => (error ? reject(error) : resolve()));
    });
  channel.on('message', (message) => {
    if (!isMessage(message)) return;
    if ('collect' in message) {
      registry
        .getMetricsAsJSON()
        .then((metrics) => send({ mp: TAG, collected: message.collect, metrics }))
        .catch((error: unknown) => send({ mp: TAG, collected: message.collect, error: String(error) }))
        .catch(() => undefined);
    } else if ('answer' in message) {
      const request = waiting.get(message.answer);
      if (!request) return;
      waiting.delete(message.answer);
      clearTimeout(request.timer);
      if (message.text !== undefined) request.resolve(message.text);
      else request.reject(new Error(message.error ?? 'no metrics from the primary process'));
    }
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`the primary process sent no metrics within ${ASK_TIMEOUT_MS} ms`));
      }, ASK_TIMEOUT_MS);
      waiting.set(id, { resolve, reject, timer });
      send({ mp: TAG, ask: id }).catch((error: unknown) => {
        waiting.delete(id);
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      });
    });
}

/** What the primary needs of the cluster. */
export interface MetricsCluster {
  on(event: 'message', listener: (worker: Worker, message: unknown) => void): unknown;
  /** The workers whose metrics count: those listening. */
  listening(): Worker[];
}

/**
 * In the primary: answers every worker's request for the instance's metrics with the aggregate
 * of `own` (the primary's registry) and every listening worker's.
 */
export function serveInstanceMetrics(own: Registry, cluster: MetricsCluster): void {
  const collecting = new Map<number, { pending: number; results: Metrics[]; done(): void }>();
  let next = 0;

  const collect = (): Promise<Metrics[]> =>
    new Promise((resolve) => {
      const id = next++;
      const workers = cluster.listening().filter((w) => w.isConnected());
      const results: Metrics[] = [];
      const done = () => {
        clearTimeout(timer);
        collecting.delete(id);
        resolve(results);
      };
      // A worker that does not answer in time (stuck, or exiting) is left out of this scrape.
      const timer = setTimeout(done, COLLECT_TIMEOUT_MS);
      collecting.set(id, { pending: workers.length, results, done });
      if (workers.length === 0) return done();
      for (const worker of workers) worker.send({ mp: TAG, collect: id } satisfies Message, undefined, undefined, () => undefined);
    });

  cluster.on('message', (worker, message) => {
    if (!isMessage(message)) return;
    if ('collected' in message) {
      const request = collecting.get(message.collected);
      if (!request) return;
      if (message.metrics) request.results.push(message.metrics);
      if (--request.pending === 0) request.done();
    } else if ('ask' in message) {
      const reply = (answer: Message) => worker.isConnected() && worker.send(answer, undefined, undefined, () => undefined);
      Promise.all([own.getMetricsAsJSON(), collect()])
        .then(([mine, theirs]) => AggregatorRegistry.aggregate([mine, ...theirs] as Metrics[]).metrics())
        .then((text) => reply({ mp: TAG, answer: message.ask, text }))
        .catch((error: unknown) => reply({ mp: TAG, answer: message.ask, error: String(error) }));
    }
  });
}
