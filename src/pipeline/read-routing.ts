import type { DocumentNode, ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { RevisionSource } from '../cache/freshness.js';
import type { Caller } from '../context/actor.js';
import type { ApiContext } from '../context/context.js';
import { isDatabaseUnavailable, type PrismaClient } from '../db/prisma.js';
import type { Replica, Replicas } from '../db/replicas.js';
import { operationOf, rootFieldNames } from './graphql-response-cache.js';
import type { RequestState } from './request-state.js';

// Applies the read-replica rule (src/db/replicas.ts, `choose`) to API requests, both faces: REST
// runs each route's operation through the same pipeline, so this plugin sees every operation.
//
// A request's choice is made once (the first to ask: REST's response-cache lookup, or execution)
// and kept on the request's state (`replica`, written here alone), so the response cache reads the
// data revision where the answer would be read: an answer kept under a replica's revision is that
// replica's data at that revision, the same data the replica itself would answer.
//
// A query on a replica that fails for want of the database (the replica went away between two
// checks) marks the replica down and runs again on the primary: a read has no side effect.
// A mutation by a key announces its account's write before and after it runs (read-your-writes).

export interface ReadRouting {
  /** The replica this request's operation reads from, or null for the primary; the same for the whole request. */
  targetOf(request: RequestState, caller: Caller | undefined, document: DocumentNode, operationName?: string | null): Replica | null;
  /** Where the response cache reads the data revision for this request's operation: undefined for the primary. */
  revisionOf(request: RequestState, caller: Caller | undefined, document: DocumentNode, operationName?: string | null): RevisionSource | undefined;
  plugin: Plugin;
}

export interface ReadRoutingDeps {
  replicas: Replicas;
  primary: PrismaClient;
  /** Each replica's data revision (src/cache/revision.ts on its URL). */
  revisions: Map<Replica, RevisionSource>;
  /** Counts one operation's reads by where they went. */
  onRead?: (target: Replica | null) => void;
  onFallback?: (replica: Replica, error: unknown) => void;
}

const accountOfCaller = (caller: Caller | undefined) => (caller?.kind === 'key' ? caller.accountId : null);

export function createReadRouting({ replicas, primary, revisions, onRead, onFallback }: ReadRoutingDeps): ReadRouting {
  function targetOf(request: RequestState, caller: Caller | undefined, document: DocumentNode, operationName?: string | null): Replica | null {
    if (request.replica !== undefined) return request.replica;
    const operation = operationOf(document, operationName);
    request.replica = operation
      ? replicas.choose({ readOnly: operation.operation === 'query', rootFields: rootFieldNames(document, operation.selectionSet), accountId: accountOfCaller(caller) })
      : null;
    return request.replica;
  }

  const plugin: Plugin = {
    onExecute({ args, executeFn, setExecuteFn }) {
      const ctx = args.contextValue as unknown as ApiContext & RequestState;
      const operation = operationOf(args.document, args.operationName);
      if (!operation) return;
      const accountId = accountOfCaller(ctx.actor);
      if (operation.operation === 'mutation') {
        if (accountId === null) return;
        setExecuteFn(async (execArgs) => {
          // An announcement that fails (the primary away) fails the write's own statements too.
          await replicas.writing(accountId).catch(() => undefined);
          try {
            return await executeFn(execArgs);
          } finally {
            await replicas.wrote(accountId).catch(() => undefined);
          }
        });
        return;
      }
      if (operation.operation !== 'query') return;
      const replica = targetOf(ctx, ctx.actor, args.document, args.operationName);
      if (!replica) {
        onRead?.(null);
        return;
      }
      ctx.readFrom(replica.prisma);
      setExecuteFn(async (execArgs) => {
        const result = (await executeFn(execArgs)) as ExecutionResult;
        const unavailable = result.errors?.find((error) => isDatabaseUnavailable(error) || (error.originalError as { code?: unknown } | undefined)?.code === 'SERVICE_UNAVAILABLE');
        if (!unavailable) {
          onRead?.(replica);
          return result;
        }
        replicas.failed(replica);
        onFallback?.(replica, unavailable);
        // Afresh on the primary: the request's loaders may hold the replica's failures.
        ctx.readFrom(primary, { afresh: true });
        onRead?.(null);
        return executeFn(execArgs);
      });
    },
  };

  return {
    targetOf,
    revisionOf: (request, caller, document, operationName) => {
      const replica = targetOf(request, caller, document, operationName);
      return replica ? revisions.get(replica) : undefined;
    },
    plugin,
  };
}
