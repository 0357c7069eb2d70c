import type { ExecutionResult, GraphQLSchema } from 'graphql';
import { isAsyncIterable, processRegularResult, type Plugin } from 'graphql-yoga';
import { cacheControl, cachingHeaders, etagOf, matchesIfNoneMatch } from '../rest/caching.js';
import { PUBLIC_ONE_MINUTE } from '../rest/routes.js';
import { Response } from '../shared/fetch-api.js';
import { isCatalogueQuery } from './graphql-response-cache.js';
import type { ApiContext } from '../context/context.js';
import type { RequestState } from './request-state.js';

// HTTP caching of /graphql answers to GET, by REST's rules (src/rest/caching.ts): an ETag on every
// successful answer (If-None-Match → 304), public caching for a minute of a catalogue query
// (./graphql-response-cache.ts, isCatalogueQuery) asked without a key, and private,
// always-revalidated caching of anything keyed or about the caller. With persisted queries
// (./graphql-persisted.ts) a GET by hash is a short, stable URL a CDN can key on.
//
// The ETag is the answer's without `extensions.cost` (./graphql-cost-budget.ts, added after this),
// which changes with every request: it is a weak validator, equal for equal data.

/** The caching rule of an execution's result, set on it until it is sent. */
const CACHE = Symbol('cache-control');
type Marked = ExecutionResult & { [CACHE]?: string; stringify?: (result: ExecutionResult) => string };

/** Place it before the response cache, so that a kept answer is marked like an executed one. */
export function useGraphqlHttpCaching(schema: GraphQLSchema): Plugin {
  const queryFields = schema.getQueryType()!.getFields();
  return {
    onExecute({ args }) {
      const context = args.contextValue as Partial<ApiContext> & { request?: Request };
      if (context.request?.method !== 'GET') return;
      const catalogue = isCatalogueQuery(queryFields, args.document, args.operationName);
      const rule = cacheControl(catalogue ? { cache: PUBLIC_ONE_MINUTE } : {}, context.actor);
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          setResult(Object.assign(result, { [CACHE]: rule }));
        },
      };
    },
    onResultProcess({ request, result, resultProcessor, serverContext, setResultProcessor }) {
      if (request.method !== 'GET' || Array.isArray(result)) return;
      if (isAsyncIterable(result) || (resultProcessor && resultProcessor !== processRegularResult)) {
        // Sent in parts (multipart/mixed, text/event-stream): an incremental answer (@defer, @stream),
        // or any answer to a client that asked for parts. Its headers go before its body is made, so
        // it has no ETag and If-None-Match is not answered with a 304; and no shared cache may keep
        // it, to answer it to a client that asked the same URL for JSON.
        (serverContext as RequestState).getCaching = { cacheControl: 'no-store' };
        return;
      }
      const marked = result as Marked;
      const rule = marked[CACHE];
      // Errors are about this request at this moment: never validated or kept.
      if (!rule || marked.errors?.length) return;
      const etag = etagOf(marked.stringify ? marked.stringify(marked) : JSON.stringify(marked));
      if (matchesIfNoneMatch(request.headers.get('if-none-match'), etag)) {
        setResultProcessor(() => new Response(null, { status: 304, headers: cachingHeaders(etag, rule) }), 'application/json');
        return;
      }
      (serverContext as RequestState).getCaching = { etag, cacheControl: rule };
    },
    onResponse({ response, serverContext }) {
      const caching = (serverContext as RequestState | undefined)?.getCaching;
      if (!caching || response.status !== 200) return;
      if (!caching.etag) {
        // Deleted first: the SSE answer's own `Cache-Control` would stay beside a `set` spelt in lower case.
        response.headers.delete('cache-control');
        response.headers.set('cache-control', caching.cacheControl);
        return;
      }
      for (const [name, value] of Object.entries(cachingHeaders(caching.etag, caching.cacheControl))) response.headers.set(name, value);
    },
  };
}
