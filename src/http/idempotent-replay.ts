import type { Plugin } from 'graphql-yoga';
import type { Context } from '../graphql/context.js';
import { idempotencyOutcome, REPLAYED_HEADER } from '../modules/orders/idempotency.js';

/**
 * `Idempotent-Replayed: true` on a /graphql response whose operation answered from an
 * Idempotency-Key (a replayed order or a replayed rejection), as REST sends it: a client can
 * tell a retry's answer from a first one.
 */
export function useIdempotentReplayHeader(): Plugin<Context> {
  // Per app, not per module: a request is only remembered until its response is sent.
  const replayed = new WeakSet<Request>();
  return {
    onExecute({ args }) {
      return {
        onExecuteDone() {
          const ctx = args.contextValue;
          if (idempotencyOutcome(ctx)?.replayed) replayed.add(ctx.request);
        },
      };
    },
    onResponse({ request, response }) {
      if (replayed.has(request)) response.headers.set(REPLAYED_HEADER, 'true');
    },
  };
}
