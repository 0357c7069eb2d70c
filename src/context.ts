import { randomUUID } from 'node:crypto';
import type DataLoader from 'dataloader';
import type { PrismaClient } from './db/prisma.js';

/** Who is calling. Authentication (API keys) plugs in here and nowhere else. */
export type Caller = { kind: 'anonymous'; ip: string };

/** Per-request state shared by the GraphQL resolvers and the REST adapter. */
export interface Context {
  prisma: PrismaClient;
  requestId: string;
  caller: Caller;
  /** Per-request DataLoaders by name (src/loaders.ts). */
  loaders: Map<string, DataLoader<unknown, unknown>>;
}

export interface ContextDeps {
  prisma: PrismaClient;
}

/** Builds the context for one request; /graphql and /api both call this, once per request. */
export function createContextFactory({ prisma }: ContextDeps) {
  return (request: Request, ip: string): Context => ({
    prisma,
    requestId: request.headers.get('x-request-id') ?? randomUUID(),
    caller: { kind: 'anonymous', ip },
    loaders: new Map(),
  });
}
