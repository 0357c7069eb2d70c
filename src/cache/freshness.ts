import pg from 'pg';
import { EVERYTHING } from './dependencies.js';
import { coalescedRead } from '../shared/coalesced-read.js';

// What changed, and when: the data revision (table "DataRevision", bumped by the commit of every
// transaction that really changes a row an API read can show) and, for each revision, the tags it
// changed ("CacheChange"; migration *_cache_dependencies). A kept answer made at revision R with
// tags T is fresh while no tag of T changed after R: the response cache asks this for each hit,
// and the gate for each key it kept (a key revoked or narrowed by a commit is read again by the
// very next request on any instance).
//
// One small read per request, coalesced: it returns the current revision and the changes since
// the last one this process knows, which every source (the primary, each replica) adds to one
// shared knowledge. A read already under way started before a newly arrived request, so it may
// miss a commit made in between; the newcomer waits for the next read, which starts once that one
// ends and serves everyone who arrived meanwhile. So one read is in flight per source at a time,
// however busy the instance, and each request's revision is read after it arrived.

/** The changes this process knows of, shared by every source of the same database's revisions. */
export interface ChangeKnowledge {
  /** True when an answer made at `madeAt` with `tags` is still fresh (as far as the last read knows). */
  fresh(tags: readonly string[], madeAt: number): boolean;
  /** Called with the tags of every change this process learns of (to drop what they made stale). */
  onChange(listener: (tags: ReadonlySet<string>) => void): void;
  /** Called when this process lost track (changes pruned before it read them): everything kept is stale. */
  onReset(listener: () => void): void;
  /** Every change after this revision is known; answers made earlier are not trusted. */
  readonly knownFrom: number;
}

interface Knowledge extends ChangeKnowledge {
  /** The revision `since` a read should ask the changes after (-1: none yet, just the revision). */
  since(): number;
  learn(read: RevisionRead): void;
}

/** Tags remembered at most: past this, the process forgets them all and trusts only newer answers. */
const MAX_KNOWN_TAGS = 200_000;

export function createChangeKnowledge(): Knowledge {
  const lastChanged = new Map<string, number>();
  const changeListeners: ((tags: ReadonlySet<string>) => void)[] = [];
  const resetListeners: (() => void)[] = [];
  let knownFrom = Infinity;
  let knownThrough = -1;

  function reset(to: number) {
    lastChanged.clear();
    knownFrom = to;
    knownThrough = to;
    for (const listener of resetListeners) listener();
  }

  return {
    get knownFrom() {
      return knownFrom;
    },
    since: () => knownThrough,
    learn({ revision, changesFrom, changes }) {
      if (changes === null) {
        // The first read, or one that could not be told what changed (pruned past it): start over from here.
        if (knownThrough < 0 || changesFrom > knownThrough) reset(revision);
        return;
      }
      if (revision <= knownThrough) return;
      const changed = new Set<string>();
      for (const [at, tag] of changes) {
        if (at <= knownThrough) continue;
        changed.add(tag);
        if ((lastChanged.get(tag) ?? -1) < at) lastChanged.set(tag, at);
      }
      knownThrough = revision;
      if (changed.has(EVERYTHING)) {
        reset(revision);
        return;
      }
      if (lastChanged.size > MAX_KNOWN_TAGS) {
        reset(revision);
        return;
      }
      if (changed.size) for (const listener of changeListeners) listener(changed);
    },
    fresh(tags, madeAt) {
      if (madeAt < knownFrom) return false;
      for (const tag of tags) if ((lastChanged.get(tag) ?? -1) > madeAt) return false;
      return true;
    },
    onChange: (listener) => void changeListeners.push(listener),
    onReset: (listener) => void resetListeners.push(listener),
  };
}

/** One read of a source: its revision, and the changes after what the process knew (null: not asked, or pruned). */
interface RevisionRead {
  revision: number;
  changesFrom: number;
  changes: [number, string][] | null;
}

export interface RevisionSource {
  /** The revision as of now (read after this call), with what changed up to it learnt. Rejects when the database cannot say. */
  current(): Promise<number>;
  close(): Promise<void>;
}

/** How long changes are kept in "CacheChange": a process that has not read them by then starts over. */
const KEEP_CHANGES = '5 minutes';
const PRUNE_EVERY_MS = 60_000;

// The function (migration *_cache_dependencies) keeps its plans per connection: the same
// statement sent as text cost 2-3× as much, planned on every read.
const READ = 'SELECT * FROM "cache_read"($1)';

// Whole revisions only (a transaction's tags share one), and never one a reader could still be
// about to learn: only those older than KEEP_CHANGES.
const PRUNE = `
  WITH cut AS (SELECT max("revision") AS r FROM "CacheChange" WHERE "at" < now() - interval '${KEEP_CHANGES}'),
  gone AS (DELETE FROM "CacheChange" WHERE "revision" <= (SELECT r FROM cut))
  UPDATE "DataRevision" SET "changesFrom" = (SELECT r FROM cut) WHERE "id" = 1 AND (SELECT r FROM cut) > "changesFrom"`;

export interface RevisionSourceOptions {
  connectMs: number;
  queryMs: number;
  knowledge: Knowledge;
  /** Prune old changes now and then (the primary's source; a replica is read-only). */
  prune?: { onError(error: unknown): void };
}

export function createRevisionSource(databaseUrl: string, { connectMs, queryMs, knowledge, prune }: RevisionSourceOptions): RevisionSource {
  // Its own two connections: a request's pool being exhausted must not delay the check, and the
  // check must not take a request's connection.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2, keepAlive: true, connectionTimeoutMillis: connectMs, query_timeout: queryMs });
  pool.on('error', () => undefined);
  const current = coalescedRead(async () => {
    const { rows } = await pool.query<RevisionRead>(READ, [knowledge.since()]);
    if (!rows[0]) throw new Error('DataRevision has no row: the migrations have not been applied');
    knowledge.learn(rows[0]);
    return rows[0].revision;
  });

  const pruning = prune && setInterval(() => void pool.query(PRUNE).catch(prune.onError), PRUNE_EVERY_MS).unref();
  return {
    current,
    close: () => {
      clearInterval(pruning);
      return pool.end();
    },
  };
}
