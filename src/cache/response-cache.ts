import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Caller } from '../context/actor.js';
import type { RevisionSource } from './revision.js';

// The response cache: answers to reads (REST GETs, GraphQL queries) kept and answered again
// without running a resolver or reaching Prisma. Never stale, and never a time-to-live guess: an
// answer is kept under the data revision it was made at (revision.ts), read for each request, so
// the first request after any write, on any instance, misses and is answered afresh.
//
// An answer is kept per caller's view: anonymous callers share theirs; a key's answers are its
// own (what a key may see depends on its account, its scopes, and the key itself: /api/me shows
// the calling key), so one account's data never reaches another, nor another key's view.
//
// In memory by default, bounded by bytes (least recently used goes first); in Redis when
// REDIS_URL is set, shared by every instance; RESPONSE_CACHE=off keeps nothing.

export interface CachedAnswer {
  status: number;
  body: string;
  /** The ETag of `body` where the face sends one (REST), kept with it: a hit answers If-None-Match without hashing. */
  etag?: string;
}

interface AnswerStore {
  get(key: string): Promise<CachedAnswer | undefined> | CachedAnswer | undefined;
  set(key: string, answer: CachedAnswer): void;
  /** Everything kept is stale (a new revision): memory is given back at once. */
  dropAll(): void;
  close(): Promise<void>;
}

/** Least recently used first, within `maxBytes` of bodies (UTF-16: 2 bytes a character) and keys. */
function memoryStore(maxBytes: number): AnswerStore {
  const entries = new Map<string, { answer: CachedAnswer; bytes: number }>();
  let bytes = 0;
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      entries.delete(key);
      entries.set(key, entry);
      return entry.answer;
    },
    set(key, answer) {
      const size = 2 * (key.length + answer.body.length + (answer.etag?.length ?? 0)) + 64;
      if (size > maxBytes / 4) return;
      const old = entries.get(key);
      if (old) bytes -= old.bytes;
      entries.delete(key);
      entries.set(key, { answer, bytes: size });
      bytes += size;
      for (const [oldest, entry] of entries) {
        if (bytes <= maxBytes) break;
        entries.delete(oldest);
        bytes -= entry.bytes;
      }
    },
    dropAll() {
      entries.clear();
      bytes = 0;
    },
    close: async () => undefined,
  };
}

/** Every key this cache writes in Redis starts with this. */
export const REDIS_PREFIX = 'rc:';
/**
 * Kept answers carry their revision in their key, so a stale one is never read again; this only
 * gives Redis its memory back. Freshness never depends on it.
 */
const REDIS_RECLAIM_MS = 10 * 60_000;

function redisStore(url: string, onError: (error: unknown) => void): AnswerStore {
  // No queue while disconnected, one try per command: a cache that cannot answer is a miss, at once.
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
  redis.on('error', onError);
  return {
    async get(key) {
      try {
        const raw = await redis.get(REDIS_PREFIX + key);
        return raw === null ? undefined : (JSON.parse(raw) as CachedAnswer);
      } catch (error) {
        onError(error);
        return undefined;
      }
    },
    set(key, answer) {
      redis.set(REDIS_PREFIX + key, JSON.stringify(answer), 'PX', REDIS_RECLAIM_MS).catch(onError);
    },
    dropAll: () => undefined,
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

export interface ResponseCacheEvents {
  hit(face: Face): void;
  miss(face: Face): void;
  /** The revision moved on: every answer kept before is stale. */
  invalidated(): void;
  storeError(error: unknown): void;
}

export type Face = 'rest' | 'graphql';

/** What a request asks and who asks it: equal parts, equal answers. */
export interface AnswerParts {
  face: Face;
  /** The operation, normalised by its face (a route and its sorted query; a document and its operation name). */
  operation: string;
  /** Its variables or parameters as text (spelt differently, they only miss: never a wrong answer). */
  variables: string;
  caller: Caller | undefined;
  /**
   * Where this request's revision is read: the read replica its reads go to (src/db/replicas.ts),
   * so an answer made there is kept under the revision it was made at; default the primary's.
   */
  revision?: RevisionSource;
}

/** A request the cache may answer: its hit, or where to keep its answer once made. */
export interface Lookup {
  hit: CachedAnswer | undefined;
  keep(answer: CachedAnswer): void;
}

export interface ResponseCache {
  /** Null: this request cannot be answered from the cache (off, or the revision cannot be read). */
  lookup(parts: AnswerParts): Promise<Lookup | null>;
  close(): Promise<void>;
}

/**
 * Whose view an answer is: anonymous, or one key's as this request saw it (the key, its account,
 * scopes and settings). Not the key's id alone: an instance may check a key from its key cache a
 * moment before it hears of a change to it, after the change has bumped the revision; the answer
 * that request makes is kept under the new revision, and must be found only by callers with the
 * key's old settings (so, by nobody once the instance hears), never by the key as it now is.
 */
function viewOf(caller: Caller | undefined): string {
  if (!caller || caller.kind === 'anonymous') return 'anonymous';
  // Everything the key check made of the key; the client's address is not part of the view.
  const { ip: _ip, ...key } = caller;
  return JSON.stringify(key);
}

export interface ResponseCacheOptions {
  revision: RevisionSource;
  maxBytes: number;
  redisUrl?: string;
  events: ResponseCacheEvents;
}

export function createResponseCache({ revision, maxBytes, redisUrl, events }: ResponseCacheOptions): ResponseCache {
  const store = redisUrl ? redisStore(redisUrl, events.storeError) : memoryStore(maxBytes);
  let lastRevision: string | null = null;

  return {
    async lookup(parts) {
      let now: string;
      try {
        now = await (parts.revision ?? revision).current();
      } catch {
        // Unknown revision, unknown freshness: the request is answered afresh (and fails there if the database is away).
        return null;
      }
      // A replica behind the newest revision seen (or the primary behind nothing): its answers
      // are made afresh and not kept, and those kept at the newest revision stay.
      if (lastRevision !== null && BigInt(now) < BigInt(lastRevision)) return null;
      if (now !== lastRevision) {
        if (lastRevision !== null) events.invalidated();
        lastRevision = now;
        store.dropAll();
      }
      const key = createHash('sha256').update(JSON.stringify([now, parts.face, parts.operation, parts.variables, viewOf(parts.caller)])).digest('base64url');
      const hit = await store.get(key);
      if (hit) events.hit(parts.face);
      else events.miss(parts.face);
      return {
        hit,
        keep(answer) {
          // Made at `now`: valid until the revision moves, whatever it is by the time it is kept.
          if (now === lastRevision) store.set(key, answer);
        },
      };
    },
    async close() {
      await Promise.all([store.close(), revision.close()]);
    },
  };
}
