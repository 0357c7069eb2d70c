// The keys an instance has checked, kept in memory so a request with a known key costs no query.
//
// A kept key must never outlive a change to it, on this instance or any other: a trigger on
// "ApiKey" (migration api_key_notify) notifies the channel below with the hash of every key whose
// checked columns change or which is deleted ('*' on TRUNCATE), and each instance LISTENs on its
// own connection. PostgreSQL delivers a notification to every listener as the change commits.
// While this instance is not listening (starting, connection lost, reconnecting) it keeps
// nothing, so a change it could miss cannot leave a stale key behind. An age limit is a last
// resort against a connection that died without saying so.
//
// A notification arrives a moment after the commit, though: a request sent right after a key was
// revoked could still be let in. So a kept key is also checked, on every request, against the
// changes the request's freshness read learnt (src/cache/freshness.ts: the same small read the
// response cache makes, once per request): a key changed after it was read is read again.
// Concurrent lookups of one key share one query, when it was sent after the request's read. The connection must be a session
// (DATABASE_DIRECT_URL): one through a transaction pooler hears nothing, which the listener finds
// out by sending itself a probe after LISTEN (src/db/listen-check.ts); it then keeps nothing,
// says so, and tries again later.

import { LRUCache } from 'lru-cache';
import pg from 'pg';
import { confirmHearing, DeafListenerError, isProbe, listenerConnection } from '../db/listen-check.js';

/** The channel the "ApiKey" trigger notifies: a key's hash, or '*' for every key. */
export const KEY_CHANGED_CHANNEL = 'api_key_changed';
/** Keys kept at most (the least recently used go first). */
const MAX_KEYS = 10_000;
/** The wait before listening again after a failure, in ms: doubled on each further one, up to MAX_RETRY_MS. */
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;

export interface KeyCacheOptions {
  /** The database to LISTEN on (a session connection of its own, outside the pool: DATABASE_DIRECT_URL). */
  databaseUrl: string;
  /** The longest a key is kept without being read again, in ms; 0 keeps nothing (and opens no connection). */
  maxAgeMs: number;
  /** How long opening the connection may take, in ms (a database that accepts and never answers). */
  connectMs: number;
  /**
   * Told when the cache starts or stops listening, with a message for the log; `unheard` when
   * LISTEN was accepted but its probe never arrived (a transaction pooler): a configuration error.
   */
  onEvent?: (event: { type: 'listening' | 'lost' | 'unheard'; message: string }) => void;
}

/** The request's freshness read, and whether a key read at a revision is still as it was. */
export interface KeyFreshness {
  /** The data revision as of the request (read after it arrived); rejects when it cannot be read. */
  revision(): Promise<number>;
  /** False when the key changed after revision `readAt`. */
  unchanged(id: string, readAt: number): boolean;
}

export interface KeyCache<T extends { id: string }> {
  /**
   * The key with this hash: kept, or loaded by `load` (and kept if nothing changed meanwhile).
   * With `freshness`, a kept key changed since it was read is loaded again.
   */
  get(hash: string, load: () => Promise<T | null>, freshness?: KeyFreshness): Promise<T | null>;
  /** Forgets a key this process changed, before its notification arrives. */
  forgetId(id: string): void;
  /** Settles once the first attempt to listen has succeeded or failed (never rejects). */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

export function createKeyCache<T extends { id: string }>({
  databaseUrl,
  maxAgeMs,
  connectMs,
  onEvent,
}: KeyCacheOptions): KeyCache<T> {
  /** Each key with the revision it was read at (-1: not known, trusted on the notifications alone). */
  const kept = new LRUCache<string, { row: T; readAt: number }>({ max: MAX_KEYS, ttl: Math.max(maxAgeMs, 1) });
  /** Lookups under way, with the revision read before each began: a request may share one begun after its own read. */
  const loading = new Map<string, { row: Promise<T | null>; readAt: number }>();
  let listening = false;
  // Bumped by everything that may have changed a key. A load that overlapped a bump may have read
  // the key as it was before, so it is answered but not kept.
  let generation = 0;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let closed = maxAgeMs <= 0;
  let nextRetryMs = FIRST_RETRY_MS;
  // Said once until the cache listens again, not at every retry.
  let saidUnheard = false;

  function forget(hash: string) {
    generation++;
    if (hash === '*') kept.clear();
    else kept.delete(hash);
  }

  function lost(reason: string) {
    generation++;
    kept.clear();
    if (listening) onEvent?.({ type: 'lost', message: `API key cache off: ${reason}; keys are checked in the database until it listens again` });
    listening = false;
  }

  async function listen() {
    retry = undefined;
    if (closed) return;
    const connection = listenerConnection(databaseUrl, connectMs);
    client = connection;
    let ended = false;
    const drop = (reason: string, unheard = false) => {
      if (ended) return;
      ended = true;
      lost(reason);
      if (unheard && !saidUnheard) {
        saidUnheard = true;
        onEvent?.({ type: 'unheard', message: `API key cache off: ${reason}; every request reads its key from the database until it hears` });
      }
      connection.end().catch(() => undefined);
      if (closed) return;
      retry = setTimeout(() => void listen(), nextRetryMs).unref();
      nextRetryMs = Math.min(nextRetryMs * 2, MAX_RETRY_MS);
    };
    connection.on('notification', (n) => {
      if (n.channel === KEY_CHANGED_CHANNEL && !isProbe(n.payload)) forget(n.payload || '*');
    });
    connection.on('error', (error) => drop(error.message));
    connection.on('end', () => drop('the connection ended'));
    try {
      await connection.connect();
      await connection.query(`LISTEN ${KEY_CHANGED_CHANNEL}`);
      await confirmHearing(connection, databaseUrl, KEY_CHANGED_CHANNEL, { connectMs });
    } catch (error) {
      drop(error instanceof Error ? error.message : String(error), error instanceof DeafListenerError);
      return;
    }
    if (ended || closed) return;
    // Loads that began before LISTEN took effect may have missed a change: they are not kept.
    generation++;
    listening = true;
    saidUnheard = false;
    nextRetryMs = FIRST_RETRY_MS;
    onEvent?.({ type: 'listening', message: 'API key cache on: listening for key changes' });
  }

  const ready = closed ? Promise.resolve() : listen();

  return {
    ready,
    async get(hash, load, freshness) {
      if (closed) return load();
      // Unknown when the revision cannot be read (the database away): the notifications alone decide, as before.
      const now = freshness ? await freshness.revision().catch(() => -1) : -1;
      const hit = kept.get(hash);
      if (hit && (now < 0 || (hit.readAt >= 0 && freshness!.unchanged(hit.row.id, hit.readAt)))) return hit.row;
      const shared = loading.get(hash);
      if (shared && shared.readAt >= now) return shared.row;
      const before = generation;
      const row = load();
      const entry = { row, readAt: now };
      loading.set(hash, entry);
      try {
        const found = await row;
        if (found && listening && generation === before) kept.set(hash, { row: found, readAt: now });
        return found;
      } finally {
        if (loading.get(hash) === entry) loading.delete(hash);
      }
    },
    forgetId(id) {
      generation++;
      for (const [hash, entry] of kept.entries()) if (entry.row.id === id) kept.delete(hash);
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      listening = false;
      kept.clear();
      const connection = client;
      client = undefined;
      await connection?.end().catch(() => undefined);
    },
  };
}
