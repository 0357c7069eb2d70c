import type { Plugin } from 'graphql-yoga';
import type { RequestState } from './request-state.js';
import { REPLAYED_HEADER } from '../rest/replay.js';

/**
 * `Idempotent-Replayed: true` on a response whose operation answered from an Idempotency-Key (a
 * replayed order or a replayed rejection), over REST and /graphql alike: a client can tell a
 * retry's answer from a first one. The operation reported it on the request's state, which
 * both interfaces' contexts extend; this is the one place that marks it.
 */
export function useIdempotentReplayHeader(): Plugin {
  return {
    onResponse({ response, serverContext }) {
      if ((serverContext as RequestState).idempotency?.replayed) response.headers.set(REPLAYED_HEADER, 'true');
    },
  };
}
