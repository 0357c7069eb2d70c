import { describe, expect, it } from 'vitest';
import { EVERYTHING } from '../../src/cache/dependencies.js';
import { createChangeKnowledge } from '../../src/cache/freshness.js';
import { createResponseCache, type AnswerParts, type Face } from '../../src/cache/response-cache.js';
import type { Caller, KeyCaller } from '../../src/context/actor.js';

// The response cache (src/cache/response-cache.ts) in memory, over a stand-in for the database's
// revisions: a counter the test commits to, read through createChangeKnowledge as the real source
// reads "cache_read". Whose answer is whose, when a kept one is fresh, and what is never kept.

/** A database as the cache sees it: each commit is a revision with the tags it changed. */
function fakeDatabase() {
  const knowledge = createChangeKnowledge();
  let revision = 1;
  const log: [number, string][] = [];
  let reads = 0;
  let down = false;
  let closed = false;
  const source = {
    async current() {
      if (down) throw new Error('database away');
      reads++;
      const since = knowledge.since();
      knowledge.learn({ revision, changesFrom: 0, changes: since < 0 ? null : log.filter(([at]) => at > since) });
      return revision;
    },
    async close() {
      closed = true;
    },
  };
  return {
    knowledge,
    source,
    commit(...tags: string[]) {
      revision++;
      for (const tag of tags) log.push([revision, tag]);
    },
    /** A commit this process learns nothing of: the changes were pruned before it read them. */
    prunedCommit() {
      revision += 2;
      knowledge.learn({ revision, changesFrom: revision - 1, changes: null });
    },
    setDown: (value: boolean) => void (down = value),
    reads: () => reads,
    closed: () => closed,
  };
}

function cacheOver(db = fakeDatabase(), maxBytes = 1 << 20) {
  const events = { hits: [] as Face[], misses: [] as Face[], invalidated: 0 };
  const cache = createResponseCache({
    revision: db.source,
    knowledge: db.knowledge,
    maxBytes,
    events: {
      hit: (face) => void events.hits.push(face),
      miss: (face) => void events.misses.push(face),
      invalidated: (count) => void (events.invalidated += count),
      storeError: () => undefined,
    },
  });
  /** Looks the request up and, on a miss, keeps `body` for it with `tags`; says what it answered. */
  async function serve(parts: AnswerParts, body: string, tags: readonly string[] = ['Product']) {
    const lookup = await cache.lookup(parts);
    if (!lookup) return { from: 'no cache' as const, body };
    if (lookup.hit) return { from: 'cache' as const, body: lookup.hit.body };
    lookup.keep({ status: 200, body }, tags);
    return { from: 'fresh' as const, body };
  }
  return { db, cache, events, serve };
}

const key = (over: Partial<KeyCaller> = {}): KeyCaller => ({
  kind: 'key',
  ip: '192.0.2.1',
  keyId: 'k1',
  accountId: 'a1',
  plan: 'BASIC',
  scopes: ['read:products'],
  rateLimit: null,
  rateWindowSeconds: null,
  ...over,
});
const ask = (caller?: Caller, over: Partial<AnswerParts> = {}): AnswerParts => ({ face: 'rest', operation: 'GET /api/products', variables: '[]', caller, ...over });

describe('whose answer it is', () => {
  it('shares one answer among every caller without a key, whatever their address', async () => {
    const { serve } = cacheOver();
    await serve(ask({ kind: 'anonymous', ip: '192.0.2.1' }), 'A');
    expect(await serve(ask({ kind: 'anonymous', ip: '198.51.100.9' }), 'B')).toEqual({ from: 'cache', body: 'A' });
    expect(await serve(ask(undefined), 'C')).toEqual({ from: 'cache', body: 'A' });
  });

  it('never gives a key’s answer to a caller without one, nor the reverse', async () => {
    const { serve } = cacheOver();
    await serve(ask(key()), 'mine');
    expect(await serve(ask(undefined), 'public')).toEqual({ from: 'fresh', body: 'public' });
    expect(await serve(ask(key()), 'again')).toEqual({ from: 'cache', body: 'mine' });
  });

  it('keeps each key’s answers apart, even between keys of one account', async () => {
    const { serve } = cacheOver();
    await serve(ask(key()), 'k1');
    expect((await serve(ask(key({ keyId: 'k2' })), 'k2')).from).toBe('fresh');
    expect((await serve(ask(key({ accountId: 'a2', keyId: 'k3' })), 'k3')).from).toBe('fresh');
  });

  it('finds a key’s answer from any address it calls from', async () => {
    const { serve } = cacheOver();
    await serve(ask(key({ ip: '192.0.2.1' })), 'A');
    expect(await serve(ask(key({ ip: '2001:db8::1' })), 'B')).toEqual({ from: 'cache', body: 'A' });
  });

  it('does not give an answer made under a key’s old settings to the key with new ones', async () => {
    const { serve } = cacheOver();
    await serve(ask(key({ scopes: ['read:products'] })), 'narrow');
    expect((await serve(ask(key({ scopes: ['read:products', 'read:stock'] })), 'wide')).from).toBe('fresh');
    expect((await serve(ask(key({ plan: 'PRO' })), 'pro')).from).toBe('fresh');
  });

  it('keeps the faces, operations and variables apart', async () => {
    const { serve } = cacheOver();
    await serve(ask(), 'rest');
    expect((await serve(ask(undefined, { face: 'graphql' }), 'graphql')).from).toBe('fresh');
    expect((await serve(ask(undefined, { operation: 'GET /api/categories' }), 'other')).from).toBe('fresh');
    expect((await serve(ask(undefined, { variables: '[["page","2"]]' }), 'page 2')).from).toBe('fresh');
    expect(await serve(ask(), 'again')).toEqual({ from: 'cache', body: 'rest' });
  });
});

describe('when a kept answer is fresh', () => {
  it('answers again until a commit changes one of the tags it read', async () => {
    const { db, serve } = cacheOver();
    await serve(ask(), 'v1', ['Product:p1', 'Category']);
    db.commit('Product:p2', 'Supplier');
    expect((await serve(ask(), 'v2')).from).toBe('cache');
    db.commit('Category');
    expect(await serve(ask(), 'v3')).toEqual({ from: 'fresh', body: 'v3' });
    expect(await serve(ask(), 'v4')).toEqual({ from: 'cache', body: 'v3' });
  });

  it('drops what a change made stale as soon as it learns of the change, and counts it', async () => {
    const { db, serve, events } = cacheOver();
    await serve(ask(undefined, { operation: 'a' }), 'a', ['Product:p1']);
    await serve(ask(undefined, { operation: 'b' }), 'b', ['Product:p1', 'Category']);
    await serve(ask(undefined, { operation: 'c' }), 'c', ['Category']);
    db.commit('Product:p1');
    await serve(ask(undefined, { operation: 'other' }), 'x');
    await new Promise((resolve) => setImmediate(resolve));
    expect(events.invalidated).toBe(2);
    expect((await serve(ask(undefined, { operation: 'c' }), 'c2')).from).toBe('cache');
  });

  it('does not trust an answer made before a change it had not yet learnt of, and counts dropping it', async () => {
    const { db, cache, serve, events } = cacheOver();
    const lookup = (await cache.lookup(ask()))!;
    db.commit('Product');
    await serve(ask(undefined, { operation: 'other' }), 'x');
    lookup.keep({ status: 200, body: 'made before the commit' }, ['Product']);
    expect(await serve(ask(), 'after')).toEqual({ from: 'fresh', body: 'after' });
    expect(events.invalidated).toBe(1);
  });

  it('forgets everything on a change to every table (a TRUNCATE) or when changes were pruned unread', async () => {
    const { db, serve } = cacheOver();
    await serve(ask(), 'before', ['Category']);
    db.commit(EVERYTHING);
    expect((await serve(ask(), 'after truncate')).from).toBe('fresh');
    db.prunedCommit();
    expect((await serve(ask(), 'after prune')).from).toBe('fresh');
    expect((await serve(ask(), 'kept')).body).toBe('after prune');
  });

  it('reads the revision once per lookup, from the request’s own source when it has one', async () => {
    const { db, cache } = cacheOver();
    await cache.lookup(ask());
    expect(db.reads()).toBe(1);
    let replicaReads = 0;
    const onReplica = ask(undefined, {
      revision: () => {
        replicaReads++;
        return db.source.current();
      },
    });
    await cache.lookup(onReplica);
    expect(replicaReads).toBe(1);
    expect(db.reads()).toBe(2);
  });

  it('answers nothing from the cache and keeps nothing when the revision cannot be read', async () => {
    const { db, cache, serve } = cacheOver();
    await serve(ask(), 'kept');
    db.setDown(true);
    expect(await cache.lookup(ask())).toBeNull();
    db.setDown(false);
    expect((await serve(ask(), 'later')).body).toBe('kept');
  });
});

describe('what is kept', () => {
  it('keeps the status and the ETag with the body, and no ETag where none was given', async () => {
    const { cache } = cacheOver();
    (await cache.lookup(ask()))!.keep({ status: 404, body: '{"success":false}', etag: 'W/"x"' }, []);
    expect((await cache.lookup(ask()))!.hit).toMatchObject({ status: 404, body: '{"success":false}', etag: 'W/"x"' });
    (await cache.lookup(ask(undefined, { face: 'graphql' })))!.keep({ status: 200, body: '{}' }, []);
    expect((await cache.lookup(ask(undefined, { face: 'graphql' })))!.hit).not.toHaveProperty('etag');
  });

  it('does not keep an answer larger than half its bound', async () => {
    const { serve } = cacheOver(undefined, 10_000);
    await serve(ask(), 'x'.repeat(3000));
    expect((await serve(ask(), 'again')).from).toBe('fresh');
    await serve(ask(undefined, { operation: 'small' }), 'x'.repeat(1000));
    expect((await serve(ask(undefined, { operation: 'small' }), 'again')).from).toBe('cache');
  });

  it('replaces an answer kept again for the same request', async () => {
    const { cache } = cacheOver();
    (await cache.lookup(ask()))!.keep({ status: 200, body: 'first' }, []);
    (await cache.lookup(ask()))!.keep({ status: 200, body: 'second' }, []);
    expect((await cache.lookup(ask()))!.hit?.body).toBe('second');
  });

  it('tells hits and misses apart, by face', async () => {
    const { serve, events } = cacheOver();
    await serve(ask(), 'a');
    await serve(ask(), 'a');
    await serve(ask(undefined, { face: 'graphql' }), 'g');
    expect(events).toMatchObject({ hits: ['rest'], misses: ['rest', 'graphql'] });
  });

  it('closes its revision source when closed', async () => {
    const { db, cache } = cacheOver();
    await cache.close();
    expect(db.closed()).toBe(true);
  });
});
