import DataLoader from 'dataloader';
import type { RequestContext } from './context.js';

/**
 * The request's DataLoader for `key`, created on first use. Loaders live in the context, so a
 * batch never crosses requests or callers.
 */
export function requestLoader<K, V>(
  ctx: Pick<RequestContext, 'loaders'>,
  key: string,
  batch: (keys: readonly K[]) => Promise<readonly V[]>,
): DataLoader<K, V> {
  let loader = ctx.loaders.get(key) as DataLoader<K, V> | undefined;
  if (!loader) {
    loader = new DataLoader<K, V>(batch);
    ctx.loaders.set(key, loader as DataLoader<unknown, unknown>);
  }
  return loader;
}
