import pg from 'pg';
import { redactedUrl } from './database.js';
import { createPrisma, DB_TIMEOUTS, type DbTimeouts, type PrismaClient } from './prisma.js';

// Read replicas (DATABASE_READ_URLS): streaming standbys of the primary that answer the
// catalogue's reads. This file holds the one rule deciding where a read goes (`choose`); the
// faces apply it through src/pipeline/read-routing.ts, REST and GraphQL alike.
//
// The rule: a read-only operation (a GraphQL query, hence a REST GET) whose every root field is a
// catalogue field (REPLICA_FIELDS) reads from a healthy replica; everything else — writes, the
// reads of a write's transaction, orders, stock and price records, the caller's own account,
// webhooks, key checks, idempotency, the response cache's revision of a primary read — reads the
// primary.
//
// Read-your-writes: an account that writes (any mutation through the API) is announced to every
// instance on the primary's NOTIFY channel below, twice: before the write ("writing": its reads go
// to the primary until it is done) and after it committed, with the primary's WAL position then
// ("wrote at L"). That account's catalogue reads go to a replica only once the replica has
// replayed L, else to the primary. Accounts with no recent write (and anonymous callers, who
// cannot write) cost the primary nothing per request. While this instance does not hear the
// channel (starting, connection lost), every key's reads go to the primary.
//
// Health: every CHECK_MS each replica is asked whether it is a standby and how far it has
// replayed, and the primary how far its WAL goes. A replica's lag is how long ago the primary
// first reached a position the replica has not replayed (0 when it has replayed everything the
// primary had): a time, measured on the primary's own progress, so an idle primary does not look
// like a lagging replica. A replica that does not answer, is not a standby, or lags by more than
// DATABASE_REPLICA_MAX_LAG_SECONDS is skipped until a check finds it well again; a read on a
// replica that fails for want of the database marks it down at once and is run again on the
// primary (src/pipeline/read-routing.ts), so no request fails because of a replica.

/** Root Query fields a replica may answer: the public catalogue. Every other field reads the primary. */
export const REPLICA_FIELDS: ReadonlySet<string> = new Set([
  'categories',
  'categoriesConnection',
  'category',
  'product',
  'productReviews',
  'products',
  'productsConnection',
  'supplier',
  'supplierReviews',
  'suppliers',
  'suppliersConnection',
]);

/** The channel writers announce themselves on: `writing <account>` and `wrote <account> <lsn>`. */
export const WRITES_CHANNEL = 'read_after_write';
/** How often each replica and the primary's WAL position are checked. */
export const CHECK_MS = 1_000;
/** A "writing" announcement whose "wrote" never came (the writer died) is forgotten after this. */
const WRITING_MS = 30_000;

export type ReplicaState = 'starting' | 'ok' | 'down' | 'lagging' | 'not_standby';

export interface Replica {
  /** host:port/database, never a user or password: for /readyz, the metrics and the logs. */
  name: string;
  url: string;
  prisma: PrismaClient;
}

export interface ReplicaStatus {
  name: string;
  state: ReplicaState;
  /** True when reads are sent to it now. */
  used: boolean;
  /** Seconds behind the primary at the last check; null when unknown. */
  lagSeconds: number | null;
  /** pg_last_wal_replay_lsn() at the last check. */
  replayLsn: string | null;
}

export interface Replicas {
  readonly replicas: readonly Replica[];
  /**
   * The one rule: the replica an operation reads from, or null for the primary. `readOnly`: a
   * query (not a mutation, not inside a write); `rootFields`: its root fields; `accountId`: the
   * caller's account, null for an anonymous caller.
   */
  choose(operation: { readOnly: boolean; rootFields: readonly string[]; accountId: string | null }): Replica | null;
  /** A read on `replica` failed for want of the database: skipped until a check finds it well. */
  failed(replica: Replica): void;
  /** `accountId` is about to write: its reads go to the primary, on every instance, until `wrote`. */
  writing(accountId: string): Promise<void>;
  /** `accountId` has written (committed or not): its reads go to the primary until replicas replay it. */
  wrote(accountId: string): Promise<void>;
  status(): ReplicaStatus[];
  /** Settles once the first check and the first attempt to listen are over (never rejects). */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

export interface ReplicaOptions {
  urls: readonly string[];
  /** The primary (DATABASE_URL): its WAL position, and the announcements sent. */
  primaryUrl: string;
  /** A session connection to the primary (DATABASE_DIRECT_URL) to LISTEN on. */
  directUrl: string;
  maxLagSeconds: number;
  poolMax: number;
  /** The configured timeouts (configuredTimeouts); DB_TIMEOUTS unless given. */
  timeouts?: DbTimeouts;
  onEvent?: (event: { level: 'info' | 'warn'; message: string }) => void;
}

/** An LSN ('16/B374D848') as a number, to compare. */
export const lsnValue = (lsn: string): bigint => {
  const [high, low] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
};

/** host:port/database of a URL, nothing else (no user, no password, no parameters). */
export function replicaName(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return redactedUrl(url);
  }
}

interface Health {
  state: ReplicaState;
  lagSeconds: number | null;
  replay: bigint | null;
  replayLsn: string | null;
}

interface Mark {
  /** Writes announced and not finished, and until when they are believed. */
  writing: number;
  writingUntil: number;
  /** The primary's WAL position after the account's last write. */
  lsn: bigint;
}

export function createReplicas(opts: ReplicaOptions): Replicas {
  const timeouts = opts.timeouts ?? DB_TIMEOUTS;
  const replicas: Replica[] = opts.urls.map((url) => ({
    name: replicaName(url),
    url,
    prisma: createPrisma({ url, poolMax: opts.poolMax, timeouts }),
  }));
  const health = new Map<Replica, Health>(replicas.map((r) => [r, { state: 'starting', lagSeconds: null, replay: null, replayLsn: null }]));
  const checkPools = new Map(replicas.map((r) => [r, smallPool(r.url, timeouts)]));
  const primary = smallPool(opts.primaryUrl, timeouts);
  /** The primary's WAL position over time, oldest first: what a replica's replay is measured against. */
  let samples: { at: number; lsn: bigint }[] = [];
  const marks = new Map<string, Mark>();
  let listening = false;
  let closed = false;
  let turn = 0;

  const usable = (r: Replica) => health.get(r)!.state === 'ok';

  function choose({ readOnly, rootFields, accountId }: { readOnly: boolean; rootFields: readonly string[]; accountId: string | null }) {
    if (!readOnly || rootFields.length === 0) return null;
    if (!rootFields.every((field) => field.startsWith('__') || REPLICA_FIELDS.has(field))) return null;
    let needs = 0n;
    if (accountId !== null) {
      // Not hearing other instances' writes: this caller may have written through one of them.
      if (!listening) return null;
      const mark = marks.get(accountId);
      if (mark && mark.writing > 0 && mark.writingUntil > Date.now()) return null;
      needs = mark?.lsn ?? 0n;
    }
    const candidates = replicas.filter((r) => usable(r) && (needs === 0n || (health.get(r)!.replay ?? 0n) >= needs));
    if (!candidates.length) return null;
    return candidates[turn++ % candidates.length]!;
  }

  function heard(payload: string) {
    const [kind, accountId, lsn] = payload.split(' ');
    if (!accountId) return;
    const mark = marks.get(accountId) ?? { writing: 0, writingUntil: 0, lsn: 0n };
    if (kind === 'writing') {
      mark.writing = mark.writingUntil > Date.now() ? mark.writing + 1 : 1;
      mark.writingUntil = Date.now() + WRITING_MS;
    } else if (kind === 'wrote' && lsn) {
      mark.writing = Math.max(0, mark.writing - 1);
      const at = lsnValue(lsn);
      if (at > mark.lsn) mark.lsn = at;
    } else return;
    marks.set(accountId, mark);
  }

  async function announce(accountId: string, kind: 'writing' | 'wrote') {
    if (kind === 'writing') {
      heard(`writing ${accountId}`);
      await primary.query('SELECT pg_notify($1, $2)', [WRITES_CHANNEL, `writing ${accountId}`]);
      return;
    }
    // After the write's commit: the primary's WAL has been written at least to its commit record.
    const { rows } = await primary.query<{ lsn: string }>(
      `SELECT lsn, pg_notify($1, 'wrote ' || $2 || ' ' || lsn) FROM (SELECT pg_current_wal_lsn()::text AS lsn) AS now`,
      [WRITES_CHANNEL, accountId],
    );
    heard(`wrote ${accountId} ${rows[0]!.lsn}`);
  }

  // ---- The listener: other instances' announcements.
  let listener: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const listen = async (): Promise<void> => {
    if (closed) return;
    const client = new pg.Client({ connectionString: opts.directUrl, connectionTimeoutMillis: timeouts.connectMs });
    listener = client;
    const lost = (why: string) => {
      if (listener !== client) return;
      listener = undefined;
      if (listening) opts.onEvent?.({ level: 'warn', message: `read replicas: not hearing writes of other instances (${why}); keys read from the primary until heard again` });
      listening = false;
      void client.end().catch(() => undefined);
      if (!closed) retry = setTimeout(() => void listen(), CHECK_MS);
    };
    client.on('error', (error) => lost(error.message));
    client.on('end', () => lost('connection closed'));
    client.on('notification', (n) => n.channel === WRITES_CHANNEL && n.payload && heard(n.payload));
    try {
      await client.connect();
      await client.query(`LISTEN ${WRITES_CHANNEL}`);
      if (listener === client) listening = true;
    } catch (error) {
      lost(error instanceof Error ? error.message : String(error));
    }
  };

  // ---- Health checks.
  const keepSamplesMs = Math.max(60_000, opts.maxLagSeconds * 4_000);
  async function checkOnce() {
    const now = Date.now();
    try {
      const { rows } = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
      const lsn = lsnValue(rows[0]!.lsn);
      if (!samples.length || samples[samples.length - 1]!.lsn !== lsn) samples.push({ at: now, lsn });
      // Keep the newest sample older than the window: it dates the oldest position still unreplayed.
      const old = samples.findLastIndex((s) => s.at < now - keepSamplesMs);
      if (old > 0) samples = samples.slice(old);
    } catch {
      // The primary away: lag is measured against what it was known to have.
    }
    await Promise.all(
      replicas.map(async (replica) => {
        const before = health.get(replica)!;
        let next: Health;
        try {
          const { rows } = await checkPools.get(replica)!.query<{ standby: boolean; replay: string | null }>(
            'SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replay',
          );
          const row = rows[0]!;
          if (!row.standby || row.replay === null) next = { state: 'not_standby', lagSeconds: null, replay: null, replayLsn: null };
          else {
            const replay = lsnValue(row.replay);
            const behind = samples.find((s) => s.lsn > replay);
            const lagSeconds = behind ? Math.max(0, (now - behind.at) / 1000) : 0;
            next = { state: lagSeconds > opts.maxLagSeconds ? 'lagging' : 'ok', lagSeconds, replay, replayLsn: row.replay };
          }
        } catch {
          next = { state: 'down', lagSeconds: null, replay: null, replayLsn: null };
        }
        if (closed) return;
        health.set(replica, next);
        if (next.state !== before.state && !(before.state === 'starting' && next.state === 'ok')) {
          opts.onEvent?.({
            level: next.state === 'ok' ? 'info' : 'warn',
            message:
              next.state === 'ok'
                ? `read replica ${replica.name} in use again`
                : `read replica ${replica.name} skipped: ${next.state === 'lagging' ? `${next.lagSeconds!.toFixed(1)} s behind the primary (bound ${opts.maxLagSeconds} s)` : next.state === 'down' ? 'not answering' : 'not a standby'}; its reads go to the primary`,
          });
        }
      }),
    );
    // Forget what every replica has replayed, and writes announced long ago.
    const replayed = replicas.map((r) => health.get(r)!.replay ?? 0n);
    const least = replayed.length ? replayed.reduce((a, b) => (a < b ? a : b)) : 0n;
    for (const [account, mark] of marks) {
      if ((mark.writing === 0 || mark.writingUntil < now) && mark.lsn <= least) marks.delete(account);
    }
  }

  let checking: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    checking = checking.then(checkOnce);
  }, CHECK_MS);
  timer.unref();
  checking = checkOnce();
  const ready = Promise.all([checking, listen()]).then(() => undefined);

  return {
    replicas,
    choose,
    failed(replica) {
      const h = health.get(replica)!;
      if (h.state === 'ok') {
        health.set(replica, { ...h, state: 'down' });
        opts.onEvent?.({ level: 'warn', message: `read replica ${replica.name} skipped: a read on it failed; its reads go to the primary` });
      }
    },
    writing: (accountId) => announce(accountId, 'writing'),
    wrote: (accountId) => announce(accountId, 'wrote'),
    status: () =>
      replicas.map((r) => {
        const h = health.get(r)!;
        return { name: r.name, state: h.state, used: h.state === 'ok', lagSeconds: h.lagSeconds === null ? null : Math.round(h.lagSeconds * 10) / 10, replayLsn: h.replayLsn };
      }),
    ready,
    async close() {
      closed = true;
      clearInterval(timer);
      clearTimeout(retry);
      await checking.catch(() => undefined);
      const client = listener;
      listener = undefined;
      await client?.end().catch(() => undefined);
      await Promise.all([primary.end(), ...[...checkPools.values()].map((p) => p.end()), ...replicas.map((r) => r.prisma.$disconnect())]);
    },
  };
}

/** Two connections of its own, bounded: a check never waits behind requests, nor hangs. */
function smallPool(url: string, timeouts: DbTimeouts): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 2, keepAlive: true, connectionTimeoutMillis: timeouts.connectMs, query_timeout: timeouts.connectMs, idleTimeoutMillis: timeouts.idleMs });
  pool.on('error', () => undefined);
  return pool;
}
