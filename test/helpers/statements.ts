import { readFileSync } from 'node:fs';

// SQL statements told apart by the tables they read and write, not by how Prisma words them
// (aliases, column lists, subqueries and joins change between Prisma versions; the tables a
// request touches do not). Tests compare counts per table, e.g.
//   expect(byTable(sent)).toEqual({ ApiKey: 1, Product: 2, COMMIT: 1 })

/** The database's tables: the models of prisma/schema.prisma, under their @@map name if they have one. */
export const TABLES: ReadonlySet<string> = new Set(
  [...readFileSync(new URL('../../prisma/schema.prisma', import.meta.url), 'utf8').matchAll(/^model\s+(\w+)\s*\{([^}]*)\}/gm)].map(
    ([, model, body]) => /@@map\(\s*"([^"]+)"\s*\)/.exec(body!)?.[1] ?? model!,
  ),
);

export interface Statement {
  sql: string;
  /**
   * `transaction`: BEGIN, START TRANSACTION, COMMIT, END, ROLLBACK, SAVEPOINT, RELEASE;
   * `setting`: SET, RESET; `query`: everything else.
   */
  kind: 'transaction' | 'setting' | 'query';
  /** For `transaction` and `setting`: the statement's first word, upper case (COMMIT, SET…). */
  keyword: string;
  /** Tables it reads: after FROM or JOIN (a DELETE's FROM is a write). Each once, sorted. */
  reads: string[];
  /** Tables it writes: after INSERT INTO, UPDATE, DELETE FROM, MERGE INTO, TRUNCATE. Each once, sorted. */
  writes: string[];
}

const TRANSACTION = new Set(['BEGIN', 'START', 'COMMIT', 'END', 'ROLLBACK', 'ABORT', 'SAVEPOINT', 'RELEASE']);
const SETTING = new Set(['SET', 'RESET']);

/** A table reference: "Table" or "schema"."Table" (the last part is the table). */
const NAME = String.raw`("[^"]+"(?:\s*\.\s*"[^"]+")?)`;
const READ = new RegExp(String.raw`(?<!\bDELETE\s+)\b(?:FROM|JOIN)\s+(?:LATERAL\s+)?(?:ONLY\s+)?${NAME}`, 'gi');
const WRITE = new RegExp(
  String.raw`\b(?:INSERT\s+INTO|(?<!\b(?:FOR|DO|NO\s+KEY)\s+)UPDATE(?:\s+ONLY)?|DELETE\s+FROM(?:\s+ONLY)?|MERGE\s+INTO|TRUNCATE(?:\s+TABLE)?(?:\s+ONLY)?)\s+${NAME}`,
  'gi',
);

/** The table a reference names, if it is one of the database's tables (not a column, alias or CTE). */
function tableOf(reference: string): string | undefined {
  const parts = [...reference.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
  const name = parts[parts.length - 1]!;
  // "a"."b" after FROM is schema.table, or (in EXTRACT(… FROM "t"."c"), IS DISTINCT FROM "t"."c")
  // an alias and a column, which names no table.
  return TABLES.has(name) ? name : undefined;
}

const tablesMatched = (sql: string, pattern: RegExp) =>
  [...new Set([...sql.matchAll(pattern)].map((m) => tableOf(m[1]!)).filter((t): t is string => t !== undefined))].sort();

/** The statement without string literals and comments, which can hold anything, "FROM "Product"" included. */
const codeOf = (sql: string) =>
  sql
    .replace(/'(?:[^']|'')*'/g, "''")
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?\*\//g, ' ');

export function classify(sql: string): Statement {
  const code = codeOf(sql);
  const keyword = (/^\s*([A-Za-z]+)/.exec(code)?.[1] ?? '').toUpperCase();
  const kind = TRANSACTION.has(keyword) ? 'transaction' : SETTING.has(keyword) ? 'setting' : 'query';
  if (kind !== 'query') return { sql, kind, keyword, reads: [], writes: [] };
  return { sql, kind, keyword, reads: tablesMatched(code, READ), writes: tablesMatched(code, WRITE) };
}

/** Whether a statement answers a number of rows, SELECT COUNT(…) (what count() and _count aggregates send). */
export const isCount = (sql: string) => /^\s*SELECT\s+COUNT\s*\(/i.test(codeOf(sql));

/** The tables a statement reads or writes, each once, sorted. */
export function tablesOf(sql: string): string[] {
  const { reads, writes } = classify(sql);
  return [...new Set([...reads, ...writes])].sort();
}

/** Key under which statements that name no table of the database are counted. */
export const NO_TABLE = '(no table)';

/**
 * How many statements touch each table (a statement that reads or writes two tables counts for
 * both, once each). Transaction control and settings, which touch no table, are counted under
 * their keyword (`BEGIN`, `COMMIT`, `SET`…), any other statement naming no table under NO_TABLE.
 * Keys are sorted, so a failed comparison reads in order.
 */
export function byTable(statements: readonly string[]): Record<string, number> {
  const counts = new Map<string, number>();
  const add = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  for (const sql of statements) {
    const s = classify(sql);
    if (s.kind !== 'query') {
      add(s.keyword);
      continue;
    }
    const tables = tablesOf(sql);
    if (tables.length === 0) add(NO_TABLE);
    for (const table of tables) add(table);
  }
  return Object.fromEntries([...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** `tally` without `keys` (e.g. what a request's authentication costs, when that is not what is measured). */
export function without(tally: Record<string, number>, ...keys: string[]): Record<string, number> {
  return Object.fromEntries(Object.entries(tally).filter(([key]) => !keys.includes(key)));
}

/**
 * A request's key checked in the database (src/auth/key-check.ts): a read of "ApiKey" alone. The key
 * cache keeps a key KEY_CACHE_SECONDS (60 s) from its read, so on a long run any measured request
 * may check its key again.
 */
export const isKeyLookup = (sql: string) => tablesOf(sql).join() === 'ApiKey';

/**
 * The keys' timed writes, not made for any request: API keys' lastUsedAt (src/auth/last-used.ts,
 * every 30 s), the only statement that writes "ApiKey", and the flush of the keys' hourly usage
 * (src/usage/recorder.ts, every 10 s), the only one that writes "KeyUsage".
 */
export const isKeyFlush = (sql: string) => classify(sql).writes.some((table) => table === 'ApiKey' || table === 'KeyUsage');

/**
 * The response cache's prune of its change log (src/cache/freshness.ts, every minute, on its own
 * connections), the only statement that writes "CacheChange" (its triggers' inserts run inside them).
 */
export const isChangePrune = (sql: string) => classify(sql).writes.includes('CacheChange');

/**
 * The statements the app sends on timers, not for any request, which may land while a request is
 * being measured: the keys' (isKeyFlush), and the save of the list totals brought up to date
 * (src/domain/products/list-totals.ts, every second), the only one that writes "ListTotal".
 */
export const isTimedFlush = (sql: string) => isKeyFlush(sql) || classify(sql).writes.includes('ListTotal');

/** The statements sent since `before` (an index into `statements`) for requests, timed flushes left out. */
export const sentSince = (statements: readonly string[], before: number) => statements.slice(before).filter((sql) => !isTimedFlush(sql));
