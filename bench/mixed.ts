import { randomUUID } from 'node:crypto';
import type pg from 'pg';

// The bench's `mixed` part (bench/run.ts): the response cache under a busy shop. Browsing with a
// popularity skew (product pages over a Zipf-like distribution, and a fixed set of list pages)
// while orders are placed through the service at a steady rate, with a stale-read check after
// every order. This file holds the workload's pieces; run.ts measures with them.

/** Products browsed and ordered: this many, ranked by popularity (Zipf, s = 1). */
export const MIXED_SLUGS = 2_000;
/** Share of product-by-slug requests in the browsing mix; the rest are list pages. */
export const SLUG_SHARE = 0.8;
/** Zipf exponent of the products' popularity. */
export const ZIPF_S = 1;
/** Orders per second, each rate measured in turn (service, then baseline, under the same orders). */
export const ORDER_RATES = [0, 2, 10] as const;
/** Browsing requests generated in advance (a seeded sequence, cycled through). */
const SEQUENCE_LENGTH = 200_000;
/** Stock every browsed product gets before measuring, so that orders never run out. */
export const MIXED_STOCK = 1_000_000_000;

export interface MixedProduct {
  id: string;
  slug: string;
  supplierId: string;
}

export interface MixedFixtures {
  /** Most popular first: rank k has weight 1 / k^ZIPF_S. */
  products: MixedProduct[];
  /** The list pages browsed (paths with their query), each equally often. */
  lists: string[];
}

/**
 * The products browsed and ordered: active ones of active suppliers and categories that can be
 * ordered one at a time (minOrder 1), spread over the catalogue and the same every run
 * (`ORDER BY md5(id)`, the order also being their popularity rank); and the list pages: pages 1–5
 * of the default sort, pages 1–3 of each price sort, and for the `categories` top-level categories
 * with the most active products pages 1–2 of the default sort and page 1 by price.
 * Their stock is raised to MIXED_STOCK (tracked), once; each order takes 1.
 */
export async function mixedFixtures(sql: pg.Client, categories = 6): Promise<MixedFixtures> {
  const products = (
    await sql.query<MixedProduct>(
      `SELECT p.id, p.slug, p."supplierId" FROM "Product" p JOIN "Supplier" s ON s.id = p."supplierId"
        JOIN "Category" c ON c.id = p."categoryId"
        WHERE p."isActive" AND s."isActive" AND c."isActive" AND p."minOrder" <= 1
        ORDER BY md5(p.id) LIMIT $1`,
      [MIXED_SLUGS],
    )
  ).rows;
  // Only rows below the stock: a rerun writes nothing (no revision moved for nothing).
  await sql.query(`UPDATE "Product" SET stock = $2, "trackInventory" = true WHERE id = ANY($1) AND (stock < $2 / 2 OR NOT "trackInventory")`, [
    products.map((p) => p.id),
    MIXED_STOCK,
  ]);
  const top = (
    await sql.query<{ id: string }>(
      `SELECT COALESCE(c."parentId", c.id) AS id FROM "Product" p JOIN "Category" c ON c.id = p."categoryId"
        WHERE p."isActive" GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT $1`,
      [categories],
    )
  ).rows.map((r) => r.id);
  const lists: string[] = [];
  for (let page = 1; page <= 5; page++) lists.push(`/api/products?limit=12&page=${page}`);
  for (const sort of ['price_asc', 'price_desc']) for (let page = 1; page <= 3; page++) lists.push(`/api/products?sortBy=${sort}&limit=12&page=${page}`);
  for (const id of top) {
    lists.push(`/api/products?categoryId=${id}&limit=12&page=1`, `/api/products?categoryId=${id}&limit=12&page=2`);
    lists.push(`/api/products?categoryId=${id}&sortBy=price_asc&limit=12&page=1`);
  }
  return { products, lists };
}

/** mulberry32: a small seeded generator, so that every run sends the same sequence. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** Draws ranks 0…n−1 with probability ∝ 1 / (rank + 1)^s (binary search over the cumulative weights). */
export function zipf(n: number, s: number, random: () => number): () => number {
  const cumulative = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) cumulative[k] = sum += 1 / (k + 1) ** s;
  return () => {
    const x = random() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** Share of draws that land on the `top` most popular of n (for the log: how skewed the mix is). */
export function zipfShare(n: number, s: number, top: number): number {
  let all = 0;
  let head = 0;
  for (let k = 0; k < n; k++) {
    const w = 1 / (k + 1) ** s;
    all += w;
    if (k < top) head += w;
  }
  return head / all;
}

/** The browsing sequence: SLUG_SHARE product pages by popularity, the rest list pages, uniformly. */
export function browsingSequence(f: MixedFixtures, seed: number): { path: string }[] {
  const random = seeded(seed);
  const rank = zipf(f.products.length, ZIPF_S, random);
  const out: { path: string }[] = [];
  for (let i = 0; i < SEQUENCE_LENGTH; i++) {
    out.push({
      path:
        random() < SLUG_SHARE
          ? `/api/products/${encodeURIComponent(f.products[rank()]!.slug)}`
          : f.lists[Math.floor(random() * f.lists.length)]!,
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The service's response cache counters (GET /metrics, Prometheus text), summed over faces.

export interface CacheCounters {
  hits: number;
  misses: number;
  invalidations: number;
  storeErrors: number;
}

export async function cacheCounters(service: string): Promise<CacheCounters> {
  const r = await fetch(`${service}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const text = await r.text();
  if (!r.ok) throw new Error(`GET /metrics: ${r.status}`);
  const sum = (name: string) => {
    let n = 0;
    for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) n += Number(m[1]);
    return n;
  };
  return {
    hits: sum('response_cache_hits_total'),
    misses: sum('response_cache_misses_total'),
    invalidations: sum('response_cache_invalidations_total'),
    storeErrors: sum('response_cache_store_errors_total'),
  };
}

export const counterDelta = (a: CacheCounters, b: CacheCounters): CacheCounters => ({
  hits: b.hits - a.hits,
  misses: b.misses - a.misses,
  invalidations: b.invalidations - a.invalidations,
  storeErrors: b.storeErrors - a.storeErrors,
});

export const addCounters = (a: CacheCounters, b: CacheCounters): CacheCounters => ({
  hits: a.hits + b.hits,
  misses: a.misses + b.misses,
  invalidations: a.invalidations + b.invalidations,
  storeErrors: a.storeErrors + b.storeErrors,
});

export const NO_COUNTS: CacheCounters = { hits: 0, misses: 0, invalidations: 0, storeErrors: 0 };

export const hitRatio = (c: CacheCounters) => (c.hits + c.misses ? c.hits / (c.hits + c.misses) : NaN);

// ---------------------------------------------------------------------------------------------
// Orders at a steady rate, each followed by a stale-read check.

export interface OrderStats {
  rate: number;
  seconds: number;
  /** Orders sent. */
  sent: number;
  /** Answered 201. */
  placed: number;
  /** Anything else (by status, or the error's message). */
  failures: Map<string, number>;
  /** Order latencies (ms) of the 201s. */
  latencies: number[];
  /** Stale-read checks made (one per 201). */
  checks: number;
  /** The service's stock outside what the database held around the check. */
  stale: number;
  /** Checks whose GET through the service failed (not 200). */
  checkFailures: number;
  /** Checks during which another order of the same product committed (the two database reads differ). */
  overlapped: number;
  /** The first few stale reads, for the log. */
  staleSamples: string[];
}

export interface OrderStreamOptions {
  /** The service's origin. */
  service: string;
  /** The ordering account's key (not the browsing one's). */
  orderKey: string;
  /** The browsing key: the stale-read check reads as the shop's visitors do. */
  browseKey: string;
  rate: number;
  products: MixedProduct[];
  seed: number;
  /** Database reads of the check (the bench's own pool). */
  sql: pg.Pool;
  /** True once the run is interrupted: nothing more is sent. */
  stopped: () => boolean;
  log: (msg: string) => void;
}

/**
 * Places `rate` orders per second, evenly spaced (open loop: one is sent when it is due, whether
 * the one before has been answered or not), each for 1 unit of a product drawn with the
 * browsing's popularity. After each 201, the stale-read check: the product's stock read from the
 * database (pg), then the product through the service, then the database again. Stock only goes
 * down (every order takes 1; nothing is cancelled), and a fresh answer shows the stock as it was at
 * some moment of its request, so it lies between the second read and the first; above the first
 * is a stale read (an answer made before this order committed), below the second is impossible
 * for any answer. Stopping waits for the orders and checks in flight.
 */
export function startOrders(o: OrderStreamOptions): { stop(): Promise<OrderStats> } {
  const stats: OrderStats = {
    rate: o.rate,
    seconds: 0,
    sent: 0,
    placed: 0,
    failures: new Map(),
    latencies: [],
    checks: 0,
    stale: 0,
    checkFailures: 0,
    overlapped: 0,
    staleSamples: [],
  };
  const started = performance.now();
  if (o.rate <= 0) return { stop: async () => ({ ...stats, seconds: (performance.now() - started) / 1000 }) };
  const rank = zipf(o.products.length, ZIPF_S, seeded(o.seed));
  const inFlight = new Set<Promise<void>>();
  const fail = (what: string) => stats.failures.set(what, (stats.failures.get(what) ?? 0) + 1);
  const stockOf = async (id: string) => (await o.sql.query<{ stock: number }>('SELECT stock FROM "Product" WHERE id = $1', [id])).rows[0]!.stock;

  const check = async (p: MixedProduct) => {
    stats.checks++;
    const before = await stockOf(p.id);
    const r = await fetch(`${o.service}/api/products/${encodeURIComponent(p.slug)}`, { headers: { 'x-api-key': o.browseKey }, signal: AbortSignal.timeout(10_000) });
    const text = await r.text();
    const after = await stockOf(p.id);
    if (r.status !== 200) {
      stats.checkFailures++;
      return;
    }
    const shown = (JSON.parse(text) as { data: { stock: number } }).data.stock;
    if (before !== after) stats.overlapped++;
    if (shown > before || shown < after) {
      stats.stale++;
      if (stats.staleSamples.length < 5) stats.staleSamples.push(`${p.slug}: service ${shown}, database ${before} before and ${after} after`);
    }
  };

  const order = async () => {
    const p = o.products[rank()]!;
    stats.sent++;
    const t = performance.now();
    try {
      const r = await fetch(`${o.service}/api/orders`, {
        method: 'POST',
        headers: { 'x-api-key': o.orderKey, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify({ supplierId: p.supplierId, items: [{ productId: p.id, quantity: 1 }] }),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await r.text();
      if (r.status !== 201) {
        fail(String(r.status));
        if ((stats.failures.get(String(r.status)) ?? 0) <= 3) o.log(`order: ${r.status} ${text.slice(0, 300)}`);
        return;
      }
      stats.placed++;
      stats.latencies.push(performance.now() - t);
      await check(p).catch((error: unknown) => {
        stats.checkFailures++;
        o.log(`stale-read check: ${error instanceof Error ? error.message : String(error)}`);
      });
    } catch (error) {
      fail(error instanceof Error ? error.name : String(error));
    }
  };

  let next = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopping = false;
  const tick = () => {
    // Every order due by now (a busy event loop sends the late ones at once, keeping the rate).
    const now = performance.now();
    while (!stopping && !o.stopped() && started + (next * 1000) / o.rate <= now) {
      next++;
      const done: Promise<void> = order().finally(() => inFlight.delete(done));
      inFlight.add(done);
    }
    if (!stopping && !o.stopped()) timer = setTimeout(tick, Math.max(0, started + (next * 1000) / o.rate - performance.now()));
  };
  tick();
  return {
    async stop() {
      stopping = true;
      clearTimeout(timer);
      stats.seconds = (performance.now() - started) / 1000;
      await Promise.all([...inFlight]);
      return stats;
    },
  };
}

/** Failures of an order stream, in one phrase ("none" or "3 × 409, 1 × TimeoutError"). */
export const failureList = (s: OrderStats) => (s.failures.size ? [...s.failures].map(([what, n]) => `${n} × ${what}`).join(', ') : 'none');

export const orderFailures = (s: OrderStats) => [...s.failures.values()].reduce((a, b) => a + b, 0);

export function percentile(values: number[], q: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
