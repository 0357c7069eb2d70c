import pg from 'pg';
import { Repeater } from 'graphql-yoga';
import { KEY_CHANGED_CHANNEL } from '../auth/key-cache.js';
import type { KeyCaller } from '../context/actor.js';
import type { PrismaClient } from '../db/prisma.js';
import { confirmHearing, DeafListenerError, isProbe, listenerConnection } from '../db/listen-check.js';
import type { Logger } from '../config/logger.js';
import { causeOf } from '../shared/errors.js';
import { createLiveRelay } from './live-relay.js';
import { createLiveSlots, failureLog, shuttingDown } from './live-slots.js';
import { ORDER_EVENT_TYPES, type KeyEnded, type LiveFeed, type OrderSignal } from '../context/context.js';

// What feeds the GraphQL subscriptions of one process. Triggers on "Order" and "Product"
// (migration *_live_changes) notify LIVE_CHANNEL as a change commits, on whichever instance or by
// whatever means it was made, with ids only; this hub LISTENs on a session connection of its own
// (DATABASE_DIRECT_URL: through a transaction pooler nothing is heard, which the probe of
// src/db/listen-check.ts finds out) and hands each change to the streams that may hear it. The
// stream's resolver then reads the row as its own caller, so scopes and ownership are the queries'.
//
// The same connection LISTENs for key changes (the "ApiKey" trigger of migration *_api_key_notify):
// on any, the keys of the open streams are checked again in one query, and the streams of a key
// that was revoked, expired or given other scopes end at once. A key that expires on its own ends
// its streams by a timer armed at its expiry (read when a stream opens, read again on each key
// change), and whatever the timer's lateness no event is handed to a stream once its key has
// expired: each is checked as it is pushed and again as the stream's reader takes it. A sweep
// every KEY_SWEEP_MS catches anything missed while the connection was being made again.
//
// A stream holds one of its key's SUBSCRIPTIONS_PER_KEY places, counted across every instance in
// PostgreSQL (live-slots.ts), from before its first event until it closes.
//
// With REDIS_URL the change notices are also shared through Redis (relay.ts): each one this hub
// hears by LISTEN it publishes there, and it hears every instance's, so that it hears every change
// even when its own LISTEN cannot (a transaction pooler). A notice heard both ways is handled once.

/** The channel the triggers notify: `{ kind: 'order', id, type, tx }` or `{ kind: 'product', id, tx }` (tx: the transaction's id). */
export const LIVE_CHANNEL = 'live_changes';

type OrderEventType = (typeof ORDER_EVENT_TYPES)[number];

/** The last item of a stream whose key stopped working: its resolver says so, then the stream completes. */
const KEY_ENDED: KeyEnded = { keyEnded: true };
type Signal<T> = T | KeyEnded;

/** How often the keys of open streams are checked without being told of a change (a notification missed while not listening). */
const KEY_SWEEP_MS = 10_000;
/** setTimeout's longest wait (about 24.8 days): a later expiry is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** The wait before listening again after a failure, in ms: doubled on each further one, up to MAX_RETRY_MS. */
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;
/**
 * How long a notice is remembered to drop its second copy (LISTEN and Redis): far longer than the
 * two ways can be apart, and at most SEEN_MAX notices (the oldest are forgotten first).
 */
const SEEN_MS = 60_000;
const SEEN_MAX = 20_000;

/** A key's scopes as one comparable string, whatever their order. */
const scopeSet = (scopes: readonly string[]) => [...new Set(scopes)].sort().join(' ');

interface Stream {
  key: KeyCaller;
  /** Ends the stream; with `keyEnded` it first tells the subscriber why. */
  end(keyEnded: boolean): void;
}
interface OrderStream extends Stream {
  push(signal: OrderSignal): void;
}
interface ProductStream extends Stream {
  productId: string;
  push(productId: string): void;
}

export interface LiveHubOptions {
  /** The session connection to LISTEN on (DATABASE_DIRECT_URL). */
  databaseUrl: string;
  /** The pool an order's audience is read with. */
  prisma: PrismaClient;
  /** Shares change notices with the other instances through Redis pub/sub (REDIS_URL). */
  redisUrl?: string;
  /** Open streams one API key may have across every instance (SUBSCRIPTIONS_PER_KEY). */
  perKey: number;
  connectMs: number;
  logger: Logger;
}

export interface LiveHub extends LiveFeed {
  /** Settles once the first attempt to listen has succeeded or failed (never rejects). */
  readonly ready: Promise<void>;
  /** Ends every stream (each completes cleanly) and refuses new ones: the process is stopping. */
  drain(): void;
  close(): Promise<void>;
}

export function createLiveHub(options: LiveHubOptions): LiveHub {
  const { logger, prisma, perKey } = options;
  const orderStreams = new Set<OrderStream>();
  const productStreams = new Set<ProductStream>();
  const slots = createLiveSlots({ prisma, perKey, logger });
  let draining = false;
  let closed = false;

  const everyStream = (): Stream[] => [...orderStreams, ...productStreams];

  // When each key with open streams expires (unix ms; null: never), and the timer that ends its
  // streams then; kept while the key has a place (a stream not yet read from is in no set).
  const expiries = new Map<string, { at: number | null; timer?: NodeJS.Timeout }>();
  const placesByKey = new Map<string, number>();
  const expired = (keyId: string) => {
    const at = expiries.get(keyId)?.at;
    return at != null && at <= Date.now();
  };
  function endKey(keyId: string) {
    for (const s of everyStream()) if (s.key.keyId === keyId) s.end(true);
  }
  /** The key's expiry as last read: its streams end then (at once if it has passed). */
  function expiresAt(keyId: string, at: number | null) {
    const known = expiries.get(keyId);
    if (known && known.at === at) return;
    clearTimeout(known?.timer);
    const entry: { at: number | null; timer?: NodeJS.Timeout } = { at };
    expiries.set(keyId, entry);
    const arm = () => {
      entry.timer = setTimeout(() => {
        if (expiries.get(keyId) !== entry) return;
        if (Date.now() < at!) arm();
        else endKey(keyId);
      }, Math.min(Math.max(at! - Date.now(), 0), MAX_TIMER_MS)).unref();
    };
    if (at !== null) arm();
  }
  /** One place fewer for the key; with none left, its expiry is forgotten. */
  function placeGone(keyId: string) {
    const left = (placesByKey.get(keyId) ?? 1) - 1;
    if (left > 0) return void placesByKey.set(keyId, left);
    placesByKey.delete(keyId);
    clearTimeout(expiries.get(keyId)?.timer);
    expiries.delete(keyId);
  }

  /**
   * A stream registered in `set` while it is open. Its place is taken before it is returned, so
   * that a refusal is the subscription's answer rather than a first event.
   */
  async function stream<T, S extends Stream>(
    key: KeyCaller,
    gone: AbortSignal | undefined,
    set: Set<S>,
    make: (push: (value: T) => void, end: (keyEnded: boolean) => void) => S,
  ): Promise<AsyncIterable<Signal<T>>> {
    if (draining) throw shuttingDown();
    let entry: S | undefined;
    let lost = false;
    const slot = await slots.claim(key, () => (entry ? entry.end(false) : (lost = true)));
    if (draining) {
      slot.release();
      throw shuttingDown();
    }
    placesByKey.set(key.keyId, (placesByKey.get(key.keyId) ?? 0) + 1);
    expiresAt(key.keyId, slot.expiresAt);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      gone?.removeEventListener('abort', leave);
      slot.release();
      placeGone(key.keyId);
    };
    const leave = () => void reader.return?.();
    const source = new Repeater<Signal<T>>(async (push, stop) => {
      entry = make(
        (value) => {
          if (expired(key.keyId)) return entry!.end(true);
          try {
            void push(value);
          } catch {
            // A client that reads far slower than events come (Repeater's queue of pending pushes
            // is full): its stream ends, and subscribing again starts afresh.
            stop();
          }
        },
        (keyEnded) => {
          if (keyEnded) void push(KEY_ENDED);
          stop();
        },
      );
      set.add(entry);
      if (lost || draining) entry.end(false);
      else if (expired(key.keyId)) entry.end(true);
      await stop;
      set.delete(entry);
      release();
    });
    // What the subscriber reads: an event taken after the key expired is not handed on (a push
    // queued while the reader was busy, a timer that is late); the place is given back however
    // the stream ends, even one never read from.
    let over = false;
    const reader: AsyncIterableIterator<Signal<T>> = {
      [Symbol.asyncIterator]: () => reader,
      async next() {
        if (over) return { done: true, value: undefined };
        const taken = await source.next();
        if (taken.done || taken.value === KEY_ENDED || !expired(key.keyId)) return taken;
        over = true;
        void source.return();
        return { done: false, value: KEY_ENDED };
      },
      async return(value?: unknown) {
        over = true;
        release();
        return source.return(value as Signal<T>);
      },
      async throw(error?: unknown) {
        over = true;
        release();
        return source.throw(error);
      },
    };
    // A subscriber that left before its stream was first read (its connection closed before the
    // answer began) is not told by the reader's return(): the request's signal tells.
    if (gone?.aborted) leave();
    else gone?.addEventListener('abort', leave, { once: true });
    return reader;
  }

  async function onOrder(orderId: string, type: OrderEventType) {
    if (!orderStreams.size) return;
    // The supplier's members as they are now: a member removed since a stream opened hears no more.
    const [order] = await prisma.$queryRaw<{ buyerId: string; supplierId: string; members: string[] }[]>`
      SELECT o."buyerId", o."supplierId", ARRAY(SELECT m."accountId" FROM "SupplierMember" m WHERE m."supplierId" = o."supplierId") AS members
      FROM "Order" o WHERE o.id = ${orderId}`;
    if (!order) return;
    const members = new Set(order.members);
    for (const s of orderStreams) {
      // The buyer hears it as theirs; a member of the order's supplier as the supplier's.
      if (s.key.accountId === order.buyerId) s.push({ type, orderId, owner: { buyerId: order.buyerId } });
      else if (members.has(s.key.accountId)) s.push({ type, orderId, owner: { supplierId: order.supplierId } });
    }
  }

  /**
   * Ends the streams of keys that no longer work (revoked, expired, deleted) or whose scopes
   * changed: a stream was let in for the scopes its key had, and subscribing again checks anew.
   */
  async function checkKeys() {
    const streams = everyStream();
    if (!streams.length) return;
    const ids = [...new Set(streams.map((s) => s.key.keyId))];
    const rows = await prisma.$queryRaw<{ id: string; scopes: string[]; expiresAt: Date | null }[]>`
      SELECT id, scopes, "expiresAt" FROM "ApiKey" WHERE id = ANY(${ids}::text[]) AND "revokedAt" IS NULL`;
    // An expiry moved (later, sooner, or gone) re-arms its key's timer; one passed ends the streams
    // below. By this process's clock, as the gate judges a key's expiry.
    const scopesNow = new Map<string, string>();
    for (const r of rows) {
      expiresAt(r.id, r.expiresAt?.getTime() ?? null);
      if (!expired(r.id)) scopesNow.set(r.id, scopeSet(r.scopes));
    }
    for (const s of streams) if (scopesNow.get(s.key.keyId) !== scopeSet(s.key.scopes)) s.end(true);
  }

  const failed = failureLog(logger);

  function onNotification(n: pg.Notification) {
    if (isProbe(n.payload)) return;
    if (n.channel === KEY_CHANGED_CHANNEL) {
      void checkKeys().catch(failed('checking the keys of open subscriptions'));
      return;
    }
    if (n.channel !== LIVE_CHANNEL || !n.payload || !firstHeard(n.payload)) return;
    relay?.publish(n.payload);
    onChange(n.payload);
  }

  // Notices already handled (payload → when), oldest first.
  const seen = new Map<string, number>();
  /** True the first time a notice arrives (by either way), false for its second copy. */
  function firstHeard(payload: string): boolean {
    const now = Date.now();
    for (const [old, at] of seen) {
      if (at > now - SEEN_MS && seen.size < SEEN_MAX) break;
      seen.delete(old);
    }
    if (seen.has(payload)) return false;
    seen.set(payload, now);
    return true;
  }

  const relay =
    options.redisUrl === undefined
      ? undefined
      : createLiveRelay({
          redisUrl: options.redisUrl,
          logger,
          onNotice: (payload) => {
            if (firstHeard(payload)) onChange(payload);
          },
        });

  function onChange(payload: string) {
    let change: { kind?: unknown; id?: unknown; type?: unknown };
    try {
      change = JSON.parse(payload) as typeof change;
    } catch {
      return;
    }
    if (typeof change.id !== 'string') return;
    if (change.kind === 'order' && ORDER_EVENT_TYPES.includes(change.type as OrderEventType)) {
      void onOrder(change.id, change.type as OrderEventType).catch(failed('reading a changed order'));
    } else if (change.kind === 'product') {
      for (const s of productStreams) if (s.productId === change.id) s.push(change.id);
    }
  }

  // The listening connection, made again after a failure (doubling waits).
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let nextRetryMs = FIRST_RETRY_MS;
  let saidUnheard = false;
  async function listen() {
    retry = undefined;
    if (closed) return;
    const connection = listenerConnection(options.databaseUrl, options.connectMs);
    client = connection;
    let ended = false;
    const again = (error?: unknown) => {
      if (ended) return;
      ended = true;
      if (client === connection) client = undefined;
      connection.end().catch(() => undefined);
      if (error instanceof DeafListenerError) {
        if (!saidUnheard) {
          if (relay) logger.warn(`subscriptions: ${error.message}; this instance hears changes only as other instances share them through Redis (REDIS_URL)`);
          else logger.error(`subscriptions: ${error.message}; no subscription hears a change until it does`);
        }
        saidUnheard = true;
      } else if (!closed) {
        logger.warn({ cause: causeOf(error) }, 'subscriptions: not listening for changes; trying again');
      }
      if (closed) return;
      retry = setTimeout(() => void listen(), nextRetryMs).unref();
      nextRetryMs = Math.min(nextRetryMs * 2, MAX_RETRY_MS);
    };
    connection.on('notification', onNotification);
    connection.on('error', again);
    connection.on('end', () => again(new Error('the connection ended')));
    try {
      await connection.connect();
      await connection.query(`LISTEN ${LIVE_CHANNEL}; LISTEN ${KEY_CHANGED_CHANNEL}`);
      await confirmHearing(connection, options.databaseUrl, LIVE_CHANNEL, { connectMs: options.connectMs });
      nextRetryMs = FIRST_RETRY_MS;
      saidUnheard = false;
      // A key revoked while this process was not listening.
      void checkKeys().catch(failed('checking the keys of open subscriptions'));
    } catch (error) {
      again(error);
    }
  }
  const ready = listen();
  const sweep = setInterval(() => void checkKeys().catch(failed('checking the keys of open subscriptions')), KEY_SWEEP_MS).unref();

  return {
    ready,
    orders(key, gone) {
      return stream<OrderSignal, OrderStream>(key, gone, orderStreams, (push, end) => ({ key, push, end }));
    },
    product(key, productId, gone) {
      return stream<string, ProductStream>(key, gone, productStreams, (push, end) => ({ key, productId, push, end }));
    },
    drain() {
      draining = true;
      for (const s of everyStream()) s.end(false);
    },
    async close() {
      closed = true;
      this.drain();
      clearInterval(sweep);
      clearTimeout(retry);
      for (const { timer } of expiries.values()) clearTimeout(timer);
      await slots.close();
      await relay?.close();
      const connection = client;
      client = undefined;
      await connection?.end().catch(() => undefined);
    },
  };
}
