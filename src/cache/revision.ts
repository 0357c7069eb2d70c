import pg from 'pg';

// The data revision (table "DataRevision", bumped by the commit of every transaction that changes
// a row an API read can show: migration *_response_cache_revision), read for each request that
// may be answered from the response cache. That read is what makes a kept answer never stale, on
// any number of instances: a write that committed before the request arrived has bumped it.
//
// Concurrent requests share reads: a read already under way started before a newly arrived
// request, so it may miss a commit made in between; the newcomer waits for the next read, which
// starts once that one ends and serves everyone who arrived meanwhile. So one read is in flight at
// a time, however busy the instance, and each request's revision is read after it arrived.

export interface RevisionSource {
  /** The revision as of now (read after this call). Rejects when the database cannot say. */
  current(): Promise<string>;
  close(): Promise<void>;
}

export function createRevisionSource(databaseUrl: string, opts: { connectMs: number; queryMs: number }): RevisionSource {
  // Its own two connections: a request's pool being exhausted must not delay the check, and the
  // check must not take a request's connection.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2, keepAlive: true, connectionTimeoutMillis: opts.connectMs, query_timeout: opts.queryMs });
  pool.on('error', () => undefined);
  let inFlight: Promise<string> | null = null;
  let next: Promise<string> | null = null;

  const read = async () => {
    const { rows } = await pool.query<{ revision: string }>('SELECT "revision"::text AS revision FROM "DataRevision" WHERE "id" = 1');
    if (!rows[0]) throw new Error('DataRevision has no row: the migrations have not been applied');
    return rows[0].revision;
  };

  function current(): Promise<string> {
    if (!inFlight) {
      inFlight = read().finally(() => {
        inFlight = null;
      });
      return inFlight;
    }
    next ??= inFlight
      .catch(() => undefined)
      .then(() => {
        next = null;
        return current();
      });
    return next;
  }

  return { current, close: () => pool.end() };
}
