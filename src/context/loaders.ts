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

/**
 * A plugin-prisma query as part of a loader's key: its JSON, written once per frozen query (a
 * kept plan's, the same object on every execution) rather than once per parent row.
 */
const queryTexts = new WeakMap<object, string>();
export function queryKey(query: object): string {
  if (!Object.isFrozen(query)) return JSON.stringify(query);
  let text = queryTexts.get(query);
  if (text === undefined) queryTexts.set(query, (text = JSON.stringify(query)));
  return text;
}
