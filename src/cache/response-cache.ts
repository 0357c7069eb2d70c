import { createHash } from 'node:crypto';
import type { Span } from '@opentelemetry/api';
import { Redis } from 'ioredis';
import type { Caller } from '../context/actor.js';
import type { ChangeKnowledge, RevisionSource } from './freshness.js';
import { inSpan } from '../tracing/spans.js';

// The response cache: answers to reads (REST GETs, GraphQL queries) kept and answered again
// without running a resolver or reaching Prisma. Never stale, and never a time-to-live guess: an
// answer is kept with the revision it was made at and the tags of what it read
// (src/cache/dependencies.ts); each request reads the revision and what changed up to it
// (src/cache/freshness.ts), and a kept answer one of whose tags changed since is made afresh. So
// the first request after a write, on any instance, is answered afresh when the write changed
// what the answer shows, and only then: an order makes the answers that show the products it
// took stale, not the rest of the catalogue.
//
// An answer is kept per caller's view: anonymous callers share theirs; a key's answers are its
// own (what a key may see depends on its account, its scopes, and the key itself: /api/me shows
// the calling key), so one account's data never reaches another, nor another key's view.
//
// In memory by default, in Redis when REDIS_URL is set (shared by every instance); either way
// bounded by RESPONSE_CACHE_MAX_BYTES, the least recently used going first, and an answer made
// stale by a change is dropped as soon as this process learns of the change. RESPONSE_CACHE=off
// keeps nothing.

export interface CachedAnswer {
  status: number;
  body: string;
  /** The ETag of `body` where the face sends one (REST), kept with it: a hit answers If-None-Match without hashing. */
  etag?: string;
  /** The objects a GraphQL answer holds (its actual cost), counted when it was kept: a hit reports it without parsing `body`. */
  loaded?: number;
}

/** An answer as kept: with the revision it was made at and the tags of what it read. */
interface KeptAnswer extends CachedAnswer {
  madeAt: number;
  tags: readonly string[];
}

interface AnswerStore {
  get(key: string): Promise<KeptAnswer | undefined> | KeptAnswer | undefined;
  set(key: string, answer: KeptAnswer): void;
  /** An answer found stale. */
  drop(key: string): void;
  /** These tags changed: every answer that read one is stale. Says how many answers it dropped. */
  dropTagged(tags: ReadonlySet<string>): Promise<number> | number;
  /** Everything kept is stale. */
  dropAll(): void;
  close(): Promise<void>;
}

/** The bytes an answer holds in a store: its text (UTF-16 in memory), its key and tags, and bookkeeping. */
function sizeOf(key: string, answer: KeptAnswer): number {
  let tags = 0;
  for (const tag of answer.tags) tags += tag.length + 48;
  return 2 * (key.length + answer.body.length + (answer.etag?.length ?? 0)) + tags + 160;
}

/**
 * Least recently used first, within `maxBytes`; an index by tag finds what a change made stale.
 * An answer larger than half the bound is not kept (it would leave room for nothing else).
 */
function memoryStore(maxBytes: number): AnswerStore {
  const entries = new Map<string, { answer: KeptAnswer; bytes: number }>();
  const byTag = new Map<string, Set<string>>();
  let bytes = 0;
  function remove(key: string): boolean {
    const entry = entries.get(key);
    if (!entry) return false;
    entries.delete(key);
    bytes -= entry.bytes;
    for (const tag of entry.answer.tags) {
      const keys = byTag.get(tag);
      keys?.delete(key);
      if (keys?.size === 0) byTag.delete(tag);
    }
    return true;
  }
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      entries.delete(key);
      entries.set(key, entry);
      return entry.answer;
    },
    set(key, answer) {
      const size = sizeOf(key, answer);
      if (size > maxBytes / 2) return;
      remove(key);
      entries.set(key, { answer, bytes: size });
      bytes += size;
      for (const tag of answer.tags) {
        let keys = byTag.get(tag);
        if (!keys) byTag.set(tag, (keys = new Set()));
        keys.add(key);
      }
      for (const oldest of entries.keys()) {
        if (bytes <= maxBytes) break;
        remove(oldest);
      }
    },
    drop: (key) => void remove(key),
    dropTagged(tags) {
      let dropped = 0;
      for (const tag of tags) for (const key of [...(byTag.get(tag) ?? [])]) if (remove(key)) dropped++;
      return dropped;
    },
    dropAll() {
      entries.clear();
      byTag.clear();
      bytes = 0;
    },
    close: async () => undefined,
  };
}

/** Every key this cache writes in Redis starts with this. */
export const REDIS_PREFIX = 'rc:';

// Redis keeps, under REDIS_PREFIX: e:<key> each answer (JSON, with its tags), t:<tag> the keys of
// the answers that read a tag, lru (a sorted set) the keys by last use, size (a hash) each
// answer's bytes, and bytes their sum. Each script keeps them in step, atomically, so the bound
// holds whichever instances write, and however many.
const DROP_LUA = `
local function drop(p, key)
  local raw = redis.call('GET', p .. 'e:' .. key)
  if raw then
    local ok, answer = pcall(cjson.decode, raw)
    if ok and type(answer.tags) == 'table' then
      for _, tag in ipairs(answer.tags) do redis.call('SREM', p .. 't:' .. tag, key) end
    end
    redis.call('DEL', p .. 'e:' .. key)
  end
  local size = redis.call('HGET', p .. 'size', key)
  if size then
    redis.call('HDEL', p .. 'size', key)
    redis.call('DECRBY', p .. 'bytes', size)
  end
  redis.call('ZREM', p .. 'lru', key)
  return raw and 1 or 0
end
`;

/** ARGV: prefix, key, answer, size, now, maxBytes, tags… */
const SET_LUA = `${DROP_LUA}
local p, key, size, max = ARGV[1], ARGV[2], tonumber(ARGV[4]), tonumber(ARGV[6])
drop(p, key)
redis.call('SET', p .. 'e:' .. key, ARGV[3])
redis.call('HSET', p .. 'size', key, size)
redis.call('INCRBY', p .. 'bytes', size)
redis.call('ZADD', p .. 'lru', ARGV[5], key)
for i = 7, #ARGV do redis.call('SADD', p .. 't:' .. ARGV[i], key) end
while tonumber(redis.call('GET', p .. 'bytes') or '0') > max do
  local oldest = redis.call('ZRANGE', p .. 'lru', 0, 0)
  if #oldest == 0 then break end
  drop(p, oldest[1])
end
return 1`;

/** ARGV: prefix, key, now. */
const GET_LUA = `
local raw = redis.call('GET', ARGV[1] .. 'e:' .. ARGV[2])
if raw then redis.call('ZADD', ARGV[1] .. 'lru', 'XX', ARGV[3], ARGV[2]) end
return raw`;

/** ARGV: prefix, key. */
const DROP_ONE_LUA = `${DROP_LUA}
return drop(ARGV[1], ARGV[2])`;

/** ARGV: prefix, tags…; returns how many answers it dropped. */
const DROP_TAGGED_LUA = `${DROP_LUA}
local p, dropped = ARGV[1], 0
for i = 2, #ARGV do
  for _, key in ipairs(redis.call('SMEMBERS', p .. 't:' .. ARGV[i])) do dropped = dropped + drop(p, key) end
  redis.call('DEL', p .. 't:' .. ARGV[i])
end
return dropped`;

interface CacheRedis extends Redis {
  rcSet(...args: (string | number)[]): Promise<number>;
  rcGet(prefix: string, key: string, now: number): Promise<string | null>;
  rcDrop(prefix: string, key: string): Promise<number>;
  rcDropTagged(...args: string[]): Promise<number>;
}

function redisStore(url: string, maxBytes: number, onError: (error: unknown) => void): AnswerStore {
  // No queue while disconnected, one try per command: a cache that cannot answer is a miss, at once.
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false }) as CacheRedis;
  redis.defineCommand('rcSet', { numberOfKeys: 0, lua: SET_LUA });
  redis.defineCommand('rcGet', { numberOfKeys: 0, lua: GET_LUA });
  redis.defineCommand('rcDrop', { numberOfKeys: 0, lua: DROP_ONE_LUA });
  redis.defineCommand('rcDropTagged', { numberOfKeys: 0, lua: DROP_TAGGED_LUA });
  redis.on('error', onError);
  return {
    async get(key) {
      try {
        const raw = await redis.rcGet(REDIS_PREFIX, key, Date.now());
        return raw === null ? undefined : (JSON.parse(raw) as KeptAnswer);
      } catch (error) {
        onError(error);
        return undefined;
      }
    },
    set(key, answer) {
      const size = sizeOf(key, answer);
      if (size > maxBytes / 2) return;
      redis.rcSet(REDIS_PREFIX, key, JSON.stringify(answer), size, Date.now(), maxBytes, ...answer.tags).catch(onError);
    },
    drop(key) {
      redis.rcDrop(REDIS_PREFIX, key).catch(onError);
    },
    async dropTagged(tags) {
      try {
        return await redis.rcDropTagged(REDIS_PREFIX, ...tags);
      } catch (error) {
        onError(error);
        return 0;
      }
    },
    // Answers other instances made may still be fresh for them: each answer's own revision and
    // tags decide, and the bound keeps the rest in check.
    dropAll: () => undefined,
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

export interface ResponseCacheEvents {
  hit(face: Face): void;
  miss(face: Face): void;
  /** `count` kept answers were dropped as stale (a change to what they read). */
  invalidated(count: number): void;
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
   * This request's revision, read after it arrived: from the read replica its reads go to
   * (src/db/replicas.ts), so an answer made there is kept at the revision it was made at, or the
   * primary's read the gate already made for the request; default a read of the primary's.
   */
  revision?: () => Promise<number>;
}

/** A request the cache may answer: its hit, or where to keep its answer once made. */
export interface Lookup {
  hit: CachedAnswer | undefined;
  /** Keeps the answer made for this request, with the tags of what it read (src/cache/dependencies.ts). */
  keep(answer: CachedAnswer, tags: readonly string[]): void;
}

export interface ResponseCache {
  /** Null: this request cannot be answered from the cache (off, or the revision cannot be read). */
  lookup(parts: AnswerParts): Promise<Lookup | null>;
  close(): Promise<void>;
}

/**
 * Whose view an answer is: anonymous, or one key's as this request saw it (the key, its account,
 * scopes and settings). Not the key's id alone: what a key may see depends on its settings, and
 * an answer made under old settings must be found only by callers with those settings.
 */
function viewOf(caller: Caller | undefined): string {
  if (!caller || caller.kind === 'anonymous') return 'anonymous';
  // Everything the key check made of the key; the client's address is not part of the view.
  const { ip: _ip, ...key } = caller;
  return JSON.stringify(key);
}

export interface ResponseCacheOptions {
  /** The primary's revisions, and what changed. */
  revision: RevisionSource;
  knowledge: ChangeKnowledge;
  maxBytes: number;
  redisUrl?: string;
  events: ResponseCacheEvents;
}

export function createResponseCache({ revision, knowledge, maxBytes, redisUrl, events }: ResponseCacheOptions): ResponseCache {
  const store = redisUrl ? redisStore(redisUrl, maxBytes, events.storeError) : memoryStore(maxBytes);
  // Drop what a change made stale as soon as it is known, rather than when it is next asked for.
  knowledge.onChange((tags) => {
    void Promise.resolve(store.dropTagged(tags)).then((dropped) => dropped && events.invalidated(dropped));
  });
  knowledge.onReset(() => store.dropAll());

  return {
    // Its decision is on its span: hit, miss, stale (kept, but something it read changed), or unavailable.
    lookup: (parts) => inSpan('response cache lookup', { attributes: { 'cache.face': parts.face } }, (span) => lookup(parts, span)),
    async close() {
      await Promise.all([store.close(), revision.close()]);
    },
  };

  async function lookup(parts: AnswerParts, span: Span): Promise<Lookup | null> {
    let now: number;
    try {
      now = await (parts.revision ?? revision.current)();
    } catch {
      // Unknown revision, unknown freshness: the request is answered afresh (and fails there if the database is away).
      span.setAttribute('cache.result', 'unavailable');
      return null;
    }
    const key = createHash('sha256').update(JSON.stringify([parts.face, parts.operation, parts.variables, viewOf(parts.caller)])).digest('base64url');
    const kept = await store.get(key);
    let hit: CachedAnswer | undefined;
    if (kept && knowledge.fresh(kept.tags, kept.madeAt)) {
      hit = kept;
      events.hit(parts.face);
    } else {
      if (kept) {
        store.drop(key);
        events.invalidated(1);
      }
      events.miss(parts.face);
    }
    span.setAttribute('cache.result', hit ? 'hit' : kept ? 'stale' : 'miss');
    return {
      hit,
      keep(answer, tags) {
        // Made at `now` or later: fresh until one of its tags changes after `now`.
        const { status, body, etag, loaded } = answer;
        store.set(key, { status, body, ...(etag ? { etag } : {}), ...(loaded !== undefined ? { loaded } : {}), madeAt: now, tags });
      },
    };
  }
}
