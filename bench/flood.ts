import { execFileSync } from 'node:child_process';
import { Redis } from 'ioredis';
import type pg from 'pg';

// The bench's `flood` part (bench/run.ts): the response cache in Redis under a stream of writes.
// Every write moves the data revision, so every list page read afterwards is a new answer to keep;
// the bound set with RESPONSE_CACHE_MAX_BYTES must hold Redis' memory all the same. This file holds
// the pieces (where redis-server is, the memory sampler, the profile saver); run.ts measures.

/** The response cache's bound given to the service (RESPONSE_CACHE_MAX_BYTES). */
export const FLOOD_BOUND_BYTES = 32 * 2 ** 20;
/** How often the account's profile is saved (ms): a real change each time. */
export const FLOOD_SAVE_EVERY_MS = 25;
/** List pages read round-robin. */
export const FLOOD_PAGES = 20;
/**
 * The bench's own safety stop: past this much Redis memory the read load ends early (reported as
 * such), so that an unbounded cache cannot take the machine's memory. Never a Redis setting: the
 * bench leaves Redis' own configuration (maxmemory, eviction) to the service.
 */
export const FLOOD_SAFETY_BYTES = 2 * 2 ** 30;

/** The redis-server executable, or undefined when there is none on PATH. */
export function redisServerPath(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
  } catch {
    return undefined;
  }
}

export interface RedisSample {
  /** Seconds since the load started (negative: before it). */
  at: number;
  usedMemory: number;
  keys: number;
}

export async function redisSample(redis: Redis, since: number): Promise<RedisSample> {
  const [info, keys] = await Promise.all([redis.info('memory'), redis.dbsize()]);
  const used = /^used_memory:(\d+)/m.exec(info);
  if (!used) throw new Error('INFO memory has no used_memory');
  return { at: (performance.now() - since) / 1000, usedMemory: Number(used[1]), keys };
}

/**
 * Samples Redis now (the first sample, before the load) and then every second until stopped (the
 * last, after it); `over` is called once when used_memory passes FLOOD_SAFETY_BYTES.
 */
export async function sampleRedis(redis: Redis, over: (s: RedisSample) => void, log: (msg: string) => void) {
  const since = performance.now();
  const samples: RedisSample[] = [await redisSample(redis, since)];
  let warned = false;
  let busy = false;
  const take = async () => {
    if (busy) return;
    busy = true;
    try {
      const s = await redisSample(redis, since);
      samples.push(s);
      if (s.usedMemory > FLOOD_SAFETY_BYTES && !warned) {
        warned = true;
        over(s);
      }
    } catch (error) {
      log(`redis sample: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void take(), 1000);
  return {
    since,
    samples,
    async stop() {
      clearInterval(timer);
      while (busy) await new Promise((r) => setTimeout(r, 20));
      await take();
      return samples;
    },
  };
}

/**
 * Saves one account's profile every FLOOD_SAVE_EVERY_MS with plain SQL, a real change each time
 * (its name alternates), steadily (one save at a time; a late one is sent at once). Each commit
 * moves the data revision (the Account trigger of migration *_response_cache_revision).
 */
export function saveProfileSteadily(sql: pg.Pool, accountId: string, stopped: () => boolean, log: (msg: string) => void) {
  const started = performance.now();
  let saves = 0;
  let failures = 0;
  let stopping = false;
  const loop = (async () => {
    for (let n = 0; !stopping && !stopped(); n++) {
      const due = started + n * FLOOD_SAVE_EVERY_MS;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (stopping || stopped()) break;
      try {
        await sql.query(`UPDATE "Account" SET name = $2, "updatedAt" = now() WHERE id = $1`, [accountId, n % 2 ? 'Flood bench B' : 'Flood bench A']);
        saves++;
      } catch (error) {
        failures++;
        if (failures <= 3) log(`profile save: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  })();
  return {
    async stop() {
      stopping = true;
      await loop;
      return { saves, failures, seconds: (performance.now() - started) / 1000 };
    },
  };
}

export const mib = (bytes: number) => bytes / 2 ** 20;

/**
 * Redis' keys counted by prefix (up to the first ':'), e.g. "rc: 3021, rl: 4": what the service
 * keeps there besides the response cache. SCAN, at most `limit` keys (the rest are "…").
 */
export async function keysByPrefix(redis: Redis, limit = 500_000): Promise<string> {
  const counts = new Map<string, number>();
  let cursor = '0';
  let seen = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const colon = key.indexOf(':');
      const prefix = colon >= 0 ? key.slice(0, colon + 1) : key;
      counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
    }
    seen += keys.length;
  } while (cursor !== '0' && seen < limit);
  const list = [...counts].sort((a, b) => b[1] - a[1]).map(([prefix, n]) => `${prefix} ${n}`);
  return (list.length > 8 ? [...list.slice(0, 8), `${list.length - 8} more prefixes`] : list).join(', ') + (cursor !== '0' ? ', … (not all scanned)' : '');
}
