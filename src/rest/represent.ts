import { execute, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { KeyCaller } from '../auth/identity.js';
import type { Context } from '../graphql/context.js';
import type { Prisma } from '../generated/prisma/client.js';
import { deriveRoute, type DerivedRoute } from './derive.js';
import type { RestRoute, RestShape } from './routes.js';

// A resource's REST representation outside a request: what `GET path` would answer a caller,
// read by the route's own operation (so an event's `data` is exactly the API's), with any client,
// a transaction's included.

export type RepresentedPath = '/api/orders/:id' | '/api/v1/stock';

export type Represent = (
  db: Prisma.TransactionClient,
  caller: KeyCaller,
  path: RepresentedPath,
  values: { params?: Record<string, string>; query?: Record<string, string> },
) => Promise<unknown>;

/** `contextFor` builds the context the operation runs in: the caller's, reading with `db`. */
export function createRepresenter(schema: GraphQLSchema, routes: readonly RestRoute[], contextFor: (db: Prisma.TransactionClient, caller: KeyCaller) => Context): Represent {
  const derived = new Map<string, DerivedRoute>();
  const routeOf = (path: string) => {
    let route = derived.get(path);
    if (!route) {
      const found = routes.find((r) => r.method === 'GET' && r.path === path);
      if (!found) throw new Error(`No GET route at ${path}`);
      route = deriveRoute(found, schema);
      derived.set(path, route);
    }
    return route;
  };
  return async (db, caller, path, { params = {}, query = {} }) => {
    const route = routeOf(path);
    const parsed = route.parseQuery(query);
    const result = (await execute({ schema, document: route.operation, variableValues: route.variables(parsed, params), contextValue: contextFor(db, caller) })) as ExecutionResult;
    if (result.errors?.length) throw result.errors[0];
    const shape: RestShape = typeof route.shape === 'function' ? route.shape(parsed) : route.shape;
    return (result.data as Record<string, unknown> | null | undefined)?.[shape.field] ?? null;
  };
}
