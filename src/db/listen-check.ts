import crypto from 'node:crypto';
import pg from 'pg';

// LISTEN needs a session: notifications go to the server connection that ran LISTEN, as they
// commit. A transaction pooler (PgBouncer's pool_mode = transaction) accepts LISTEN, then hands
// that server connection to other clients between transactions, so nothing ever reaches the
// listener, and nothing says so. A listener therefore proves that it hears before relying on it:
// right after LISTEN it sends itself a notification from another connection and waits for it.

/** Payloads of probe notifications start with this; listeners ignore them. */
const PROBE_PREFIX = 'listen-probe:';

/**
 * The application_name of every connection that only LISTENs (subscriptions, the key cache, the
 * webhook worker): an operator tells them apart in pg_stat_activity from those serving requests.
 */
export const LISTENER_APPLICATION_NAME = 'marketplace-listener';

/** A connection of its own for LISTEN, kept alive, named LISTENER_APPLICATION_NAME. */
export const listenerConnection = (databaseUrl: string, connectMs: number): pg.Client =>
  new pg.Client({ connectionString: databaseUrl, keepAlive: true, connectionTimeoutMillis: connectMs, application_name: LISTENER_APPLICATION_NAME });

/** How long a probe may take to arrive: on a session connection it takes a few milliseconds. */
export const PROBE_TIMEOUT_MS = 2_000;

/** True for the payload of a probe (another instance's or this one's), which tells of no change. */
export const isProbe = (payload: string | undefined): boolean => payload?.startsWith(PROBE_PREFIX) ?? false;

/** The listening connection did not hear its probe: it is not a session of its own. */
export class DeafListenerError extends Error {
  override name = 'DeafListenerError';
}

/**
 * Resolves once a notification sent on `channel` from another connection to `url` has reached
 * `listener` (which has run LISTEN on it). Rejects with a DeafListenerError when it has not
 * within `timeoutMs`, or with the error of the sending connection.
 */
export async function confirmHearing(listener: pg.Client, url: string, channel: string, opts: { connectMs: number; timeoutMs?: number }): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? PROBE_TIMEOUT_MS;
  const payload = `${PROBE_PREFIX}${crypto.randomUUID()}`;
  let onNotification: ((n: pg.Notification) => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const heard = new Promise<void>((resolve, reject) => {
    onNotification = (n) => {
      if (n.channel === channel && n.payload === payload) resolve();
    };
    listener.on('notification', onNotification);
    timer = setTimeout(
      () =>
        reject(
          new DeafListenerError(
            `LISTEN hears nothing on the direct connection (DATABASE_DIRECT_URL, else DATABASE_URL): a notification sent to it did not arrive within ${timeoutMs} ms. ` +
              'A transaction pooler (PgBouncer pool_mode = transaction) cannot carry LISTEN: point DATABASE_DIRECT_URL at the PostgreSQL server itself (or a session-mode pooler)',
          ),
        ),
      timeoutMs,
    );
  });
  heard.catch(() => undefined);
  const sender = new pg.Client({ connectionString: url, connectionTimeoutMillis: opts.connectMs });
  sender.on('error', () => undefined);
  try {
    await sender.connect();
    await sender.query('SELECT pg_notify($1, $2)', [channel, payload]);
    await heard;
  } finally {
    clearTimeout(timer);
    if (onNotification) listener.off('notification', onNotification);
    void sender.end().catch(() => undefined);
  }
}
