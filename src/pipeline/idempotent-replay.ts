import type { Plugin } from 'graphql-yoga';
import type { ApiContext } from '../context/context.js';
import { REPLAYED_HEADER } from '../rest/replay.js';

/**
 * `Idempotent-Replayed: true` on a response whose operation answered from an Idempotency-Key (a
 * replayed order or a replayed rejection), over REST and /graphql alike: a client can tell a
 * retry's answer from a first one. The operation reported it on the request's context
 * (ApiContext.idempotency), which both faces' contexts extend; this is the one place that marks it.
 */
export function useIdempotentReplayHeader(): Plugin {
  return {
    onResponse({ response, serverContext }) {
      if ((serverContext as Partial<ApiContext>).idempotency?.replayed) response.headers.set(REPLAYED_HEADER, 'true');
    },
  };
}
