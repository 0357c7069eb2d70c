import { Redis, type RedisOptions } from 'ioredis';
import { reconnectDelay } from '../ratelimit/redis-store.js';
import type { Logger } from '../config/logger.js';

// The subscriptions' change notices shared through Redis pub/sub (REDIS_URL). Every instance that
// hears a notice by LISTEN publishes it here as it came (ids only, the trigger's payload), and
// every instance subscribes (RELAY_CHANNEL): one that cannot LISTEN (its direct connection is a transaction
// pooler) still hears every change, and one that can hears each change twice, which the hub folds
// by the payload (it names its transaction). Redis being down costs nothing but that second way:
// it is said once, publishing is skipped meanwhile, and the subscription resumes when it is back.
//
// Only what LISTEN hears is published, never a write by the instance that made it: the triggers
// stay the one place that says what changed (API, dashboard, CLI or plain SQL alike), and an
// instance started by the server always LISTENs (it refuses to start without a session connection).

/** The Redis channel the notices of PostgreSQL's live_changes are shared on. */
export const RELAY_CHANNEL = 'live:changes';

export interface LiveRelayOptions {
  redisUrl: string;
  logger: Logger;
  /** A notice published by any instance (this one's own included). */
  onNotice(payload: string): void;
}

export interface LiveRelay {
  /** Shares a notice heard by LISTEN; dropped while Redis is unreachable. */
  publish(payload: string): void;
  close(): Promise<void>;
}

export function createLiveRelay({ redisUrl, logger, onNotice }: LiveRelayOptions): LiveRelay {
  const options: RedisOptions = {
    connectTimeout: 2_000,
    // Reconnect for ever, quickly (at most 2 s apart): a subscription resumes as Redis is back.
    retryStrategy: reconnectDelay,
    maxRetriesPerRequest: null,
  };
  // A connection that subscribes can send nothing else. It subscribes on each (re)connection
  // itself, so that the outage is said to be over only once notices are heard again.
  const subscriber = new Redis(redisUrl, { ...options, connectionName: 'live-sub', autoResubscribe: false });
  // A notice that cannot be published now is late for every subscriber: not queued, not retried.
  const publisher = new Redis(redisUrl, { ...options, connectionName: 'live-pub', enableOfflineQueue: false, maxRetriesPerRequest: 0 });

  // An outage is said once (both connections see it), and its end once.
  let down = false;
  let closed = false;
  const onError = (error: Error) => {
    if (down || closed) return;
    down = true;
    logger.warn(
      { err: { message: error.message } },
      'subscriptions: Redis unreachable (REDIS_URL); changes heard by other instances reach this one only by its own LISTEN until Redis is back',
    );
  };
  subscriber.on('error', onError);
  publisher.on('error', onError);
  // Back once both connections are: the subscriber subscribed again, the publisher connected.
  let subscribed = false;
  const back = () => {
    if (!down || closed || !subscribed || publisher.status !== 'ready') return;
    down = false;
    logger.info('subscriptions: Redis reachable again (REDIS_URL); changes are shared through it again');
  };
  subscriber.on('close', () => (subscribed = false));
  subscriber.on('ready', () => {
    subscriber.subscribe(RELAY_CHANNEL).then(
      () => {
        subscribed = true;
        back();
      },
      // The connection failed again: its 'error' says so, and the next 'ready' subscribes.
      () => undefined,
    );
  });
  publisher.on('ready', back);
  subscriber.on('message', (channel: string, payload: string) => {
    if (channel === RELAY_CHANNEL) onNotice(payload);
  });

  return {
    publish(payload) {
      if (publisher.status !== 'ready') return;
      publisher.publish(RELAY_CHANNEL, payload).catch(() => undefined);
    },
    async close() {
      closed = true;
      subscriber.disconnect();
      publisher.disconnect();
    },
  };
}
