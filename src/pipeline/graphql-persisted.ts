import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { GraphQLError } from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../config/logger.js';
import { DB_RETRY_AFTER_SECONDS, type PrismaClient } from '../db/prisma.js';
import type { ErrorCode } from '../shared/errors.js';
import { causeOf, errorStatus, serviceUnavailable } from '../shared/errors.js';

// Persisted queries on /graphql (docs/api.md, Persisted queries), in one of two modes:
//
// - Automatic persisted queries (the default), as Apollo's and urql's clients and Yoga's
//   @graphql-yoga/plugin-apq speak it: `extensions.persistedQuery = { version: 1, sha256Hash }`.
//   A hash alone runs the document registered under it, or answers 404 PersistedQueryNotFound; a
//   query with its hash registers it (a hash that is not the query's SHA-256 is refused,
//   PersistedQueryMismatch). Documents live in PostgreSQL (PersistedQuery), so one registered on
//   any instance is found on every other, at most PERSISTED_QUERIES_MAX of them (the least
//   recently used evicted), each at most MAX_PERSISTED_BYTES; each instance keeps those it used
//   lately in memory (a hash names one text forever, so a copy is never stale). The protocol is
//   implemented here rather than by @graphql-yoga/plugin-apq, whose release wants an older
//   @graphql-tools/utils than this project's, and whose store interface knows no bound.
// - Trusted documents (PERSISTED_ONLY=true): only the documents of the manifest PERSISTED_DOCUMENTS
//   run (GraphQL Codegen's client preset's persisted-documents.json, `{ "<hash>": "<document>" }`),
//   sent by id (`documentId`, or `extensions.persistedQuery.sha256Hash`); any other request is
//   refused. @graphql-yoga/plugin-persisted-operations does the work.
//
// Either way the document then goes through every rule an ordinary one does (size, depth, cost,
// GET runs queries only).

/** The longest document the automatic protocol registers, in UTF-8 bytes: far past what the token limit lets through. */
export const MAX_PERSISTED_BYTES = 64 * 1024;
/** Documents each instance keeps in memory (lately used ones), by total text size. */
const MEMORY_BYTES = 8 * 1024 * 1024;

const SHA256_HEX = /^[0-9a-f]{64}$/;

const refusal = (code: ErrorCode, message: string, status: number = errorStatus[code], details?: Record<string, string>) =>
  new GraphQLError(message, { extensions: { code, ...(details ? { details } : {}), http: { status } } });

/**
 * Not found: the exact message APQ clients look for (they then send the query with its hash), with
 * the contract's code; 404 as plugin-apq answers (Apollo's link gives up persisting on a 400).
 */
const notFound = (message = 'PersistedQueryNotFound') => refusal('NOT_FOUND', message, 404);

/** The document store of the automatic protocol. */
export interface PersistedQueryStore {
  get(hash: string): Promise<string | null>;
  set(hash: string, document: string): Promise<void>;
  /** Writes the uses answered from memory since the last flush (eviction is least recently used across instances). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The advisory lock every statement that locks several rows of the table takes (an eviction, a
 * flush of uses), so they run one at a time: two of them lock their rows in orders that differ
 * (an eviction's order depends on how many rows it sees past the bound, a flush's on the hashes),
 * and without it they deadlocked (40P01: test/persisted-queries.test.ts, "registrations with the
 * table full", fails on a store without it). The others lock one row each and cannot deadlock.
 */
const EVICTION_LOCK = 0x5e_0038;

/**
 * PostgreSQL's PersistedQuery table, bounded to `max` rows, with a memory of the documents used
 * lately; the uses answered from memory are written every `flushMs` (PERSISTED_USE_FLUSH_MS).
 */
export function createPersistedQueryStore(prisma: PrismaClient, max: number, flushMs: number): PersistedQueryStore {
  const memory = new LRUCache<string, string>({ maxSize: MEMORY_BYTES, sizeCalculation: (document) => Math.max(1, document.length) });
  // Hashes answered from memory since the last flush: a use the table must learn, or another
  // instance's registrations would evict a document this one serves all day.
  let used = new Set<string>();
  const flush = async () => {
    if (used.size === 0) return;
    const hashes = [...used];
    used = new Set();
    try {
      await prisma.$transaction([
        prisma.$executeRaw`SELECT pg_advisory_xact_lock(${EVICTION_LOCK}::bigint)`,
        prisma.$executeRaw`UPDATE "PersistedQuery" SET "usedAt" = now() WHERE "hash" = ANY(${hashes}::text[])`,
      ]);
    } catch (error) {
      // Kept for the next flush: a use is not lost to a database that was away for a moment.
      for (const hash of hashes) used.add(hash);
      throw error;
    }
  };
  // One flush at a time: one waiting behind evictions does not start another each interval.
  let flushing: Promise<void> | undefined;
  const timer = setInterval(() => {
    flushing ??= flush()
      .catch(() => undefined)
      .finally(() => (flushing = undefined));
  }, flushMs);
  timer.unref();
  return {
    async get(hash) {
      const known = memory.get(hash);
      if (known !== undefined) {
        used.add(hash);
        return known;
      }
      // Loading it is a use: it moves to the back of the eviction order.
      const rows = await prisma.$queryRaw<{ document: string }[]>`
        UPDATE "PersistedQuery" SET "usedAt" = now() WHERE "hash" = ${hash} RETURNING "document"`;
      const document = rows[0]?.document ?? null;
      if (document !== null) memory.set(hash, document);
      return document;
    },
    async set(hash, document) {
      if (memory.has(hash)) return;
      await prisma.$executeRaw`
        INSERT INTO "PersistedQuery" ("hash", "document") VALUES (${hash}, ${document})
        ON CONFLICT ("hash") DO UPDATE SET "usedAt" = now()`;
      // The bound: everything past the newest `max` goes, the least recently used first. One
      // eviction at a time (the lock is released with its transaction), so writers cannot deadlock.
      await prisma.$transaction([
        prisma.$executeRaw`SELECT pg_advisory_xact_lock(${EVICTION_LOCK}::bigint)`,
        prisma.$executeRaw`
          DELETE FROM "PersistedQuery" WHERE "hash" IN (
            SELECT "hash" FROM "PersistedQuery" ORDER BY "usedAt" DESC, "hash" OFFSET ${max})`,
      ]);
      memory.set(hash, document);
    },
    flush,
    async close() {
      clearInterval(timer);
      await flushing;
      // A shutdown does not fail over the last uses: without the database they are lost.
      await flush().catch(() => undefined);
    },
  };
}

/** `extensions.persistedQuery` of the automatic protocol, when the request carries one. */
function persistedQueryOf(params: GraphQLParams): { sha256Hash: string } | null {
  const value = (params.extensions as Record<string, unknown> | undefined)?.persistedQuery;
  if (value === undefined || value === null) return null;
  const { version, sha256Hash } = value as { version?: unknown; sha256Hash?: unknown };
  if (typeof value !== 'object' || version !== 1 || typeof sha256Hash !== 'string' || !SHA256_HEX.test(sha256Hash.toLowerCase())) {
    throw refusal('VALIDATION_ERROR', 'extensions.persistedQuery must be { "version": 1, "sha256Hash": "<64 hex digits>" }');
  }
  return { sha256Hash: sha256Hash.toLowerCase() };
}

/**
 * The automatic protocol over `store`. The store failing (the database away, a lock it waited
 * too long for) never fails a request it need not: a registration that cannot be written is
 * logged and the query's answer sent all the same (the client registers it again when a later
 * hash alone is not found); a hash that cannot be looked up answers 503 SERVICE_UNAVAILABLE with
 * Retry-After, never a masked INTERNAL_ERROR.
 */
export function useAutomaticPersistedQueries(store: PersistedQueryStore, logger: Logger): Plugin {
  // A query sent with its hash waits here until it has passed every rule of the pipeline (parsed
  // within the token limit, validated, costed, for this caller) and run: only then is it stored,
  // so junk, a refused document or one this caller may not run never takes a row.
  const pending = new WeakMap<object, { hash: string; query: string }>();
  return {
    async onParams({ params, setParams, context }) {
      const persisted = persistedQueryOf(params);
      if (!persisted) return;
      if (params.query === undefined || params.query === null || params.query === '') {
        let document: string | null;
        try {
          document = await store.get(persisted.sha256Hash);
        } catch (error) {
          logger.warn({ cause: causeOf(error) }, 'persisted query lookup failed: answered 503');
          throw serviceUnavailable('Persisted queries cannot be looked up right now; retry later, or send the query with its hash', DB_RETRY_AFTER_SECONDS);
        }
        if (document === null) throw notFound();
        setParams({ ...params, query: document });
        return;
      }
      if (typeof params.query !== 'string') return; // Yoga refuses it next.
      if (Buffer.byteLength(params.query, 'utf8') > MAX_PERSISTED_BYTES) {
        throw refusal('PAYLOAD_TOO_LARGE', `A persisted query may be at most ${MAX_PERSISTED_BYTES} bytes: send this one without extensions.persistedQuery`);
      }
      if (createHash('sha256').update(params.query, 'utf8').digest('hex') !== persisted.sha256Hash) {
        throw refusal('VALIDATION_ERROR', 'PersistedQueryMismatch', 400, { sha256Hash: 'is not the SHA-256 of the query sent' });
      }
      pending.set(context, { hash: persisted.sha256Hash, query: params.query });
    },
    onExecute({ args }) {
      const registration = pending.get(args.contextValue as object);
      if (!registration) return;
      pending.delete(args.contextValue as object);
      return {
        async onExecuteDone({ result }) {
          // Executed with data: every rule passed for this caller (a refused mutation answers data null).
          if (!('data' in result) || result.data === null || result.data === undefined) return;
          try {
            await store.set(registration.hash, registration.query);
          } catch (error) {
            logger.warn({ cause: causeOf(error) }, 'persisted query not registered: its answer is sent all the same');
          }
        },
      };
    },
  };
}

/** The trusted documents of PERSISTED_DOCUMENTS: id → document. Throws, naming the file, when it is not such a manifest. */
export function loadTrustedDocuments(path: string): ReadonlyMap<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`PERSISTED_DOCUMENTS: cannot read ${path} as JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Object.values(parsed).every((d) => typeof d === 'string')) {
    throw new Error(`PERSISTED_DOCUMENTS: ${path} must be a JSON object of document id → document text, as GraphQL Codegen's client preset writes it`);
  }
  return new Map(Object.entries(parsed as Record<string, string>));
}

/** The id a trusted document is asked by: `documentId` (bare, or `sha256:<hash>`, the GraphQL over HTTP draft's form), or APQ's hash. */
function trustedDocumentId(params: GraphQLParams & { documentId?: unknown }, request: Request): string | null {
  const fromUrl = request.method === 'GET' ? new URL(request.url).searchParams.get('documentId') : null;
  const documentId = params.documentId ?? fromUrl;
  if (typeof documentId === 'string' && documentId !== '') return documentId.replace(/^sha256:/, '');
  const hash = ((params.extensions as Record<string, unknown> | undefined)?.persistedQuery as { sha256Hash?: unknown } | undefined)?.sha256Hash;
  return typeof hash === 'string' && hash !== '' ? hash : null;
}

/** Request parameters a trusted-documents client may send beside the usual four. */
export const PERSISTED_PARAM_NAMES = ['documentId'];

export function useTrustedDocuments(documents: ReadonlyMap<string, string>): Plugin {
  const onlyTrusted = 'This server runs only trusted documents';
  return usePersistedOperations({
    getPersistedOperation: (id) => documents.get(id) ?? null,
    extractPersistedOperationId: (params, request) => trustedDocumentId(params, request),
    customErrors: {
      notFound: () => notFound(`PersistedQueryNotFound: no trusted document has this id`),
      keyNotFound: () => refusal('VALIDATION_ERROR', `${onlyTrusted}: send a document's id (documentId, or extensions.persistedQuery.sha256Hash)`),
      persistedQueryOnly: () => refusal('VALIDATION_ERROR', `${onlyTrusted}: a query's text is refused; send its document id instead`),
    },
  });
}
